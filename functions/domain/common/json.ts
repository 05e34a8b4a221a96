/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON from bytes that must be valid UTF-8: an overlong form, an encoded surrogate or a stray
 * continuation byte throws, as malformed JSON does (a leading BOM is dropped). Every body the
 * service parses goes through here.
 */
export function parseStrictJson(bytes: Uint8Array): unknown {
  return JSON.parse(strictUtf8.decode(bytes));
}
