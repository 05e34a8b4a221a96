/** What the bench's phases share: how a figure is reported, and the --json contract. */

export type Figure =
  | number
  | string
  | Readonly<Record<string, number>>
  | Readonly<Record<string, Readonly<Record<string, number | string>>>>
  | readonly Readonly<Record<string, number | string>>[];
/**
 * `npm run bench -- --quick`: every phase on small loads, so that CI (.ci/run) sees every figure
 * still made in about a minute. Its figures say the bench works, not how fast the service is:
 * compare full runs only. `sized(full, quick)` is a phase's setting for the run.
 */
export const QUICK = process.argv.includes('--quick');
export const sized = <T>(full: T, quick: T): T => (QUICK ? quick : full);

/** One line of the bench table, and the figures it stands for in --json output. */
export type Report = (name: string, figure: string, figures: Readonly<Record<string, Figure>>) => void;

/** Nearest rank: the smallest sample with at least p of the samples at or below it. */
export function percentile(sorted: readonly number[], p: number): number {
  const sample = sorted.at(Math.max(0, Math.ceil(p * sorted.length) - 1));
  if (sample === undefined) throw new Error('a percentile of no samples');
  return sample;
}

/**
 * What one accepted event of SDK-like traffic costs in billed requests, measured by
 * bench/write-units.ts on the requests the handlers actually made, and priced by bench/cost.ts.
 * Every figure is per accepted event.
 */
export type EventTraffic = {
  /** POST /event requests (1 / events per batch): one CloudFront, API Gateway and ingest Lambda request each. */
  readonly http_requests: number;
  readonly dynamodb_write_units: number;
  readonly dynamodb_read_units: number;
  /** S3 PUT, COPY, POST and LIST requests. */
  readonly s3_tier1_requests: number;
  /** S3 GET, HEAD and other requests. */
  readonly s3_tier2_requests: number;
  /** SQS requests as billed (64 KiB chunks), receives that returned nothing left out. */
  readonly sqs_requests: number;
  readonly aggregator_invocations: number;
  readonly aggregator_ms_per_invocation: number;
  /** HTTP bytes from the client to CloudFront (and on to the origin), and back. */
  readonly request_bytes: number;
  readonly response_bytes: number;
  /** Audit object bytes stored in S3 (storage, stated apart from the request costs). */
  readonly audit_bytes: number;
};

/** The same for one recorded click of GET /l/{link_id}. */
export type ClickTraffic = {
  readonly http_requests: number;
  readonly dynamodb_write_units: number;
  readonly dynamodb_read_units: number;
  readonly request_bytes: number;
  readonly response_bytes: number;
};

/**
 * The --json contract (issue 11): keys every run must print, and the shape of each. run.ts checks
 * its output against it before printing, and test/unit/bench guards it without timing anything.
 */
export const REQUIRED_FIGURES = {
  ingest_cpu_ratio: 'number',
  e2e_events_per_s: 'number',
  e2e_event_p99_ms: 'number',
  e2e_clicks_per_s: 'number',
  wcu_per_event: 'number',
  wcu_per_click: 'number',
  report_p95_ms: [
    'one_day',
    'cohorts_365',
    'attribution_365',
    // Issue 23: the performance report on a busy app.
    'performance_30d_day_partner',
    'performance_30d_campaign_country',
    'performance_365d_partner',
  ],
  bundles: ['name', 'bytes', 'load_ms'],
  cost_per_million_events_usd: 'number',
  // Issue 21: write units, the hottest key at 10,000 events/s and the cost at 1, 10 and 50 events per batch.
  wcu_per_event_by_batch: ['1', '10', '50'],
  hottest_key_wcu_per_s_at_10k: ['1', '10', '50'],
  max_aggregate_item_bytes: 'number',
  cost_per_million_events_usd_by_batch: ['1', '10', '50'],
  // Issue 22: the event stream and the warehouse export.
  stream_cost_per_million_events_usd: 'number',
  export_cost_per_million_events_usd: 'number',
  export_s_per_million_events: 'number',
  // Issue 37: the first-launch answer over HTTP through the local edge, first and repeated.
  first_launch_ms: ['first_p50', 'first_p95', 'repeat_p50', 'repeat_p95'],
  // Issue 38: the web SDK's script-tag build, gzipped.
  sdk_web_gzip_bytes: 'number',
} as const;

/**
 * Every figure that is not made: a value anywhere in the figures (in tables and lists too) that is
 * null, undefined, or a number that is not finite (NaN from a division by no samples). A phase that
 * stops measuring something fails the run here, not in the docs months later.
 */
export function missingFigures(figures: unknown, at = 'figures'): string[] {
  if (typeof figures === 'string') return [];
  if (typeof figures === 'number') return Number.isFinite(figures) ? [] : [`${at} is ${figures}`];
  if (figures === null || figures === undefined) return [`${at} is ${figures}`];
  if (Array.isArray(figures)) return figures.flatMap((value, i) => missingFigures(value, `${at}[${i}]`));
  if (typeof figures === 'object') return Object.entries(figures).flatMap(([key, value]) => missingFigures(value, `${at}.${key}`));
  return [`${at} is a ${typeof figures}, not a figure`];
}

/** The contract's violations in a figures object: an empty list when it holds. */
export function contractViolations(figures: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value);
  for (const [key, shape] of Object.entries(REQUIRED_FIGURES)) {
    const value = figures[key];
    if (shape === 'number') {
      if (!isNumber(value)) problems.push(`${key} is not a finite number: ${JSON.stringify(value)}`);
    } else if (key === 'bundles') {
      const entries = Array.isArray(value) ? (value as Record<string, unknown>[]) : [];
      if (entries.length === 0) problems.push('bundles has no entry');
      for (const entry of entries) {
        if (typeof entry.name !== 'string' || !isNumber(entry.bytes) || !isNumber(entry.load_ms))
          problems.push(`bundles entry lacks name, bytes or load_ms: ${JSON.stringify(entry)}`);
      }
    } else {
      const object = (value ?? {}) as Record<string, unknown>;
      for (const field of shape) if (!isNumber(object[field])) problems.push(`${key}.${field} is not a finite number`);
    }
  }
  return problems;
}
