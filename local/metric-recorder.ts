import { Metrics } from '@aws-lambda-powertools/metrics';

/**
 * The local runtime's stand-in for CloudWatch metrics, as far as the operators' health view reads
 * them (docs/operations.md, "The health view"): the sum of each metric per UTC hour. In Lambda,
 * Powertools writes each invocation's metrics as one EMF line that CloudWatch turns into metrics;
 * locally metrics are off (POWERTOOLS_METRICS_DISABLED), so the runtime takes the same EMF object
 * from Powertools' publish, before the switch, and adds it up here. A metric with dimensions
 * besides `service` is kept under `name{key=value,...}`, so no sum mixes two of them.
 *
 * Bounded: the last KEPT_HOURS hours, and the metric names the code publishes.
 */
const HOUR_MS = 3_600_000;
const KEPT_HOURS = 48;

interface Emf {
  _aws?: { Timestamp?: number; CloudWatchMetrics?: { Dimensions?: string[][]; Metrics?: { Name: string }[] }[] };
  [field: string]: unknown;
}

/** One per process, like CloudWatch per account: a runtime restarted in the same process (tests do) keeps the earlier sums. */
const sums = new Map<number, Map<string, number>>();
let recording = false;

/** Starts recording every metric any function of this process publishes (once; later calls do nothing). */
export function recordMetrics(): void {
  if (recording) return;
  recording = true;
  const prototype = Metrics.prototype;
  const publish = prototype.publishStoredMetrics;
  prototype.publishStoredMetrics = function (this: Metrics) {
    // Recording never fails a function: whatever Powertools would refuse, its own publish refuses next.
    try {
      if (this.hasStoredMetrics()) addEmf(this.serializeMetrics() as Emf);
    } catch {}
    return publish.call(this);
  };
}

/** Adds one EMF object's metrics to the sums of its hour. */
export function addEmf(emf: Emf, nowMs = Date.now()): void {
  const hour = Math.floor((emf._aws?.Timestamp ?? nowMs) / HOUR_MS) * HOUR_MS;
  let sum = sums.get(hour);
  if (!sum) {
    sum = new Map();
    sums.set(hour, sum);
    for (const old of sums.keys()) if (old <= hour - KEPT_HOURS * HOUR_MS) sums.delete(old);
  }
  for (const directive of emf._aws?.CloudWatchMetrics ?? []) {
    const dimensions = (directive.Dimensions?.[0] ?? []).filter((name) => name !== 'service').map((name) => `${name}=${String(emf[name])}`);
    const suffix = dimensions.length ? `{${dimensions.join(',')}}` : '';
    for (const { Name } of directive.Metrics ?? []) {
      const value = emf[Name];
      const total = (Array.isArray(value) ? value : [value]).reduce<number>((s, v) => s + (typeof v === 'number' ? v : 0), 0);
      sum.set(`${Name}${suffix}`, (sum.get(`${Name}${suffix}`) ?? 0) + total);
    }
  }
}

/** Sums per hour (keyed by the hour's start, ms) of every metric recorded, the hours in [fromMs, toMs). */
export function recordedHours(fromMs: number, toMs: number): Map<number, Record<string, number>> {
  const out = new Map<number, Record<string, number>>();
  for (const [hour, sum] of sums) if (hour >= fromMs && hour < toMs) out.set(hour, Object.fromEntries(sum));
  return out;
}
