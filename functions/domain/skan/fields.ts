import { isPlainObject, parseStrictJson } from '../common/json';

/** The named fields of a postback that it has, in the order named. */
export const pick = (value: Record<string, unknown>, names: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(names.filter((name) => Object.hasOwn(value, name)).map((name) => [name, value[name]]));

/** Every field of a postback but the named ones. */
export const omit = (value: Record<string, unknown>, names: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(value).filter(([name]) => !names.includes(name)));

/** A JSON object from strict UTF-8 bytes, or undefined: the postback body, and each JWS segment. */
export function jsonObjectOf(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = parseStrictJson(bytes);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
