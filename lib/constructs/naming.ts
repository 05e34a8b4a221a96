/** Construct ids from manifest names: the manifest's own pascalCase, which its output keys use too. */
export { pascalCase } from '../manifest';

/** Object.entries that keeps the key type of a manifest record. */
export function entriesOf<K extends string, V>(record: Partial<Record<K, V>> | undefined): [K, V][] {
  return Object.entries(record ?? {}) as [K, V][];
}
