import { isPlainObject, parseStrictJson } from '../common/json';

/** The named fields of a postback that it has, in the order named. */
export const pick = (value: Record<string, unknown>, names: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(names.filter((name) => Object.hasOwn(value, name)).map((name) => [name, value[name]]));

/** Every field of a postback but the named ones. */
export const omit = (value: Record<string, unknown>, names: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(value).filter(([name]) => !names.includes(name)));

/**
 * At most maxChars of a string, never ending in half a surrogate pair (which would not be
 * well-formed text once stored).
 */
export function cut(value: string, maxChars: number): string {
  if (value.length <= maxChars) return value;
  const head = value.slice(0, maxChars);
  return /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
}

/**
 * A value kept small: a string cut to maxChars, a number, boolean or null as it is, anything else
 * (an object, an array) dropped. `trimmed` says whether anything was lost.
 */
export function scalarOf(value: unknown, maxChars: number): { value?: unknown; trimmed: boolean } {
  if (typeof value === 'string') {
    const kept = cut(value, maxChars);
    return { value: kept, trimmed: kept !== value };
  }
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return { value, trimmed: false };
  return { trimmed: value !== undefined };
}

/** The named fields of a postback, each kept small by scalarOf; `trimmed` when any other field, or part of one, was dropped. */
export function keepNamed(
  fields: Record<string, unknown>,
  names: readonly string[],
  maxChars: number,
): { kept: Record<string, unknown>; trimmed: boolean } {
  const kept: Record<string, unknown> = {};
  let trimmed = false;
  for (const [name, value] of Object.entries(fields)) {
    const scalar = names.includes(name) ? scalarOf(value, maxChars) : { trimmed: true };
    if (scalar.trimmed) trimmed = true;
    if ('value' in scalar) kept[name] = scalar.value;
  }
  return { kept, trimmed };
}

/** A JSON object from strict UTF-8 bytes, or undefined: the postback body, and each JWS segment. */
export function jsonObjectOf(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = parseStrictJson(bytes);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
