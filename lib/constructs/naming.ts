/**
 * Manifest names ("ip_blocks", "health-check") as construct ids and output keys ("IpBlocks",
 * "HealthCheck"). Plain code, no aws-cdk-lib: lib/manifest.ts, which handlers read, uses it too.
 */
export function pascalCase(name: string): string {
  return name.replace(/(^|[_-])([a-z0-9])/g, (_match, _separator, c: string) => c.toUpperCase());
}

/** Object.entries that keeps the key type of a manifest record. */
export function entriesOf<K extends string, V>(record: Partial<Record<K, V>> | undefined): [K, V][] {
  return Object.entries(record ?? {}) as [K, V][];
}
