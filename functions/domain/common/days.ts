/** Days are UTC calendar days everywhere (docs/architecture.md section 7): reports, rows, windows. */
export const DAY_MS = 86_400_000;

/** YYYY-MM-DD of an epoch-ms instant, in UTC. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
