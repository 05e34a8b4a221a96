import { DEFAULT_MEMORY_MB } from '../lib/constructs/service-function';
import { type FunctionName, type FunctionSpec, functions } from '../lib/manifest';
import type { ClickTraffic, EventTraffic, Report } from './support';

/**
 * What a million accepted events and a million clicks cost on AWS at list prices, from the requests
 * the bench measured: bench/write-units.ts counts every DynamoDB write and read unit, S3 and SQS
 * call and aggregator invocation of SDK-like traffic (traffic_per_event, traffic_per_click), and
 * bench/end-to-end.ts times the HTTP functions; this file only multiplies.
 *
 * Prices are us-east-1 on-demand list prices, first tier, free tiers left out (a marginal price, not
 * a small account's bill). docs/benchmarks.md has the same table with its sources.
 */
export const PRICES = {
  as_of: '2026-11-21',
  region: 'us-east-1',
  dynamodb: { per_million_write_request_units: 0.625, per_million_read_request_units: 0.125, per_gb_month: 0.25 },
  s3: { per_thousand_put_copy_post_list: 0.005, per_thousand_get_and_other: 0.0004, standard_per_gb_month: 0.023 },
  sqs: { per_million_standard_requests: 0.4 },
  lambda: { per_million_requests: 0.2, arm_per_gb_second: 0.0000133334 },
  api_gateway: { http_api_per_million_requests: 1.0 },
  cloudfront: { per_10k_https_requests: 0.01, per_gb_out_to_internet: 0.085, per_gb_out_to_origin: 0.02 },
} as const;

export type Prices = typeof PRICES;

export const PRICE_SOURCES = {
  dynamodb: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  s3: 'https://aws.amazon.com/s3/pricing/',
  sqs: 'https://aws.amazon.com/sqs/pricing/',
  lambda: 'https://aws.amazon.com/lambda/pricing/',
  api_gateway: 'https://aws.amazon.com/api-gateway/pricing/',
  cloudfront: 'https://aws.amazon.com/cloudfront/pricing/',
} as const;

/** The services a cost is broken down into, in USD per million (events or clicks). */
export type CostBreakdown = {
  readonly dynamodb: number;
  readonly s3: number;
  readonly sqs: number;
  readonly lambda: number;
  readonly api_gateway: number;
  readonly cloudfront: number;
};

/** A Lambda function as billed: its configured memory and the duration of one invocation. */
export type LambdaRun = { readonly memoryMb: number; readonly ms: number };

/** The memory the stack gives a function: its manifest entry's, else the construct's default. */
export function memoryOf(name: FunctionName): number {
  return (functions[name] as FunctionSpec).memoryMb ?? DEFAULT_MEMORY_MB;
}

const GIB = 1024 ** 3;
const MILLION = 1e6;

/** One invocation: the request plus its GB-seconds, duration billed in whole milliseconds, rounded up. */
export function lambdaInvocationUsd(run: LambdaRun, prices: Prices = PRICES): number {
  const gbSeconds = (run.memoryMb / 1024) * (Math.ceil(run.ms) / 1000);
  return prices.lambda.per_million_requests / MILLION + gbSeconds * prices.lambda.arm_per_gb_second;
}

/** One HTTPS request through CloudFront: the request, the body to the origin and the answer to the viewer. */
function cloudfrontUsd(requests: number, requestBytes: number, responseBytes: number, prices: Prices): number {
  const { cloudfront } = prices;
  return (
    (requests * cloudfront.per_10k_https_requests) / 10_000 +
    (requestBytes / GIB) * cloudfront.per_gb_out_to_origin +
    (responseBytes / GIB) * cloudfront.per_gb_out_to_internet
  );
}

const total = (breakdown: CostBreakdown) => Object.values(breakdown).reduce((sum, usd) => sum + usd, 0);
const perMillion = (breakdown: Record<keyof CostBreakdown, number>): CostBreakdown =>
  Object.fromEntries(Object.entries(breakdown).map(([service, usd]) => [service, usd * MILLION])) as CostBreakdown;

/** USD per million accepted events, by service. */
export function eventCost(
  traffic: EventTraffic,
  ingest: LambdaRun,
  aggregator: LambdaRun,
  prices: Prices = PRICES,
): { total: number; breakdown: CostBreakdown } {
  const breakdown = perMillion({
    dynamodb:
      (traffic.dynamodb_write_units * prices.dynamodb.per_million_write_request_units +
        traffic.dynamodb_read_units * prices.dynamodb.per_million_read_request_units) /
      MILLION,
    s3:
      (traffic.s3_tier1_requests * prices.s3.per_thousand_put_copy_post_list +
        traffic.s3_tier2_requests * prices.s3.per_thousand_get_and_other) /
      1000,
    sqs: (traffic.sqs_requests * prices.sqs.per_million_standard_requests) / MILLION,
    lambda:
      traffic.http_requests * lambdaInvocationUsd(ingest, prices) +
      traffic.aggregator_invocations * lambdaInvocationUsd(aggregator, prices),
    api_gateway: (traffic.http_requests * prices.api_gateway.http_api_per_million_requests) / MILLION,
    cloudfront: cloudfrontUsd(traffic.http_requests, traffic.request_bytes, traffic.response_bytes, prices),
  });
  return { total: total(breakdown), breakdown };
}

/**
 * Whether a click pays for an API Gateway request: not since issue 41, when CloudFront reaches the
 * redirect through its function URL (lib/manifest.ts `functionUrl`), which Lambda charges nothing for.
 */
const CLICK_THROUGH_API_GATEWAY = !(functions['link-redirect'] as FunctionSpec).functionUrl;

/** USD per million recorded clicks, by service (a click touches no S3 or SQS, nor, through the function URL, API Gateway). */
export function clickCost(
  traffic: ClickTraffic,
  redirect: LambdaRun,
  prices: Prices = PRICES,
): { total: number; breakdown: CostBreakdown } {
  const breakdown = perMillion({
    dynamodb:
      (traffic.dynamodb_write_units * prices.dynamodb.per_million_write_request_units +
        traffic.dynamodb_read_units * prices.dynamodb.per_million_read_request_units) /
      MILLION,
    s3: 0,
    sqs: 0,
    lambda: traffic.http_requests * lambdaInvocationUsd(redirect, prices),
    api_gateway: CLICK_THROUGH_API_GATEWAY ? (traffic.http_requests * prices.api_gateway.http_api_per_million_requests) / MILLION : 0,
    cloudfront: cloudfrontUsd(traffic.http_requests, traffic.request_bytes, traffic.response_bytes, prices),
  });
  return { total: total(breakdown), breakdown };
}

/** The measured inputs, as bench/run.ts has collected them from the earlier phases. */
export interface CostInputs {
  readonly trafficPerEvent: EventTraffic;
  readonly trafficPerClick: ClickTraffic;
  /** Billed duration of one POST /event and one GET /l/{link_id}: the unloaded p50 of bench/end-to-end.ts. */
  readonly ingestMs: number;
  readonly redirectMs: number;
  /**
   * The traffic per event at each batch size of bench/batch-sizes.ts, with its own ingest duration
   * (the unloaded p50 of a batch of that size): each batch is one CloudFront, API Gateway and ingest
   * Lambda request.
   */
  readonly byBatch?: Readonly<Record<string, { readonly traffic: EventTraffic; readonly ingestMs: number }>>;
}

const round = (n: number, digits = 4) => Number(n.toFixed(digits));
const roundAll = (breakdown: CostBreakdown) => Object.fromEntries(Object.entries(breakdown).map(([k, v]) => [k, round(v)]));

export function costFigures(report: Report, inputs: CostInputs): void {
  const { trafficPerEvent, trafficPerClick } = inputs;
  const events = eventCost(
    trafficPerEvent,
    { memoryMb: memoryOf('ingest'), ms: inputs.ingestMs },
    { memoryMb: memoryOf('aggregator'), ms: trafficPerEvent.aggregator_ms_per_invocation },
  );
  const clicks = clickCost(trafficPerClick, { memoryMb: memoryOf('link-redirect'), ms: inputs.redirectMs });
  // Storage is paid per month held, not per request: stated beside the total, not in it.
  const auditGb = (trafficPerEvent.audit_bytes * MILLION) / GIB;
  const listed = (breakdown: CostBreakdown) =>
    Object.entries(breakdown)
      .filter(([, usd]) => usd > 0)
      .map(([service, usd]) => `${service} ${usd.toFixed(3)}`)
      .join(', ');

  report(`AWS cost per million accepted events (USD, ${PRICES.region} list prices of ${PRICES.as_of})`, events.total.toFixed(2), {
    cost_per_million_events_usd: round(events.total, 3),
    cost_prices_as_of: PRICES.as_of,
  });
  report('  by service', listed(events.breakdown), {});
  report(`AWS cost per million clicks (USD)`, clicks.total.toFixed(2), { cost_per_million_clicks_usd: round(clicks.total, 3) });
  report('  by service', listed(clicks.breakdown), {
    cost_breakdown_usd: { events: roundAll(events.breakdown), clicks: roundAll(clicks.breakdown) },
  });
  if (inputs.byBatch) {
    const byBatch = Object.entries(inputs.byBatch).map(([size, { traffic, ingestMs }]) => {
      const cost = eventCost(
        traffic,
        { memoryMb: memoryOf('ingest'), ms: ingestMs },
        { memoryMb: memoryOf('aggregator'), ms: traffic.aggregator_ms_per_invocation },
      );
      return [size, cost] as const;
    });
    report(
      `AWS cost per million events at ${byBatch.map(([size]) => size).join(' / ')} events per batch (USD)`,
      byBatch.map(([, cost]) => cost.total.toFixed(2)).join(' / '),
      {
        cost_per_million_events_usd_by_batch: Object.fromEntries(byBatch.map(([size, cost]) => [size, round(cost.total, 3)])),
        cost_breakdown_usd_by_batch: Object.fromEntries(byBatch.map(([size, cost]) => [size, roundAll(cost.breakdown)])),
      },
    );
    for (const [size, cost] of byBatch) report(`  ${size}-event batches by service`, listed(cost.breakdown), {});
  }
  report('S3 audit storage per million events, per month in S3 Standard (USD)', (auditGb * PRICES.s3.standard_per_gb_month).toFixed(4), {
    s3_storage_per_million_events_usd_month: round(auditGb * PRICES.s3.standard_per_gb_month, 5),
  });
}
