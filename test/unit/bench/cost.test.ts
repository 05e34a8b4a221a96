import { clickCost, costFigures, eventCost, lambdaInvocationUsd, memoryOf, PRICES } from '../../../bench/cost';
import { type ClickTraffic, contractViolations, type EventTraffic, type Figure, REQUIRED_FIGURES } from '../../../bench/support';

// The bench's arithmetic and its --json contract, without timing anything: every expected figure
// below was worked out by hand from the price table, not by the code under test.

const traffic: EventTraffic = {
  http_requests: 0.025, // 40 events a batch
  dynamodb_write_units: 1.2,
  dynamodb_read_units: 0.5,
  s3_tier1_requests: 0.025,
  s3_tier2_requests: 0.025,
  sqs_requests: 0.0275,
  aggregator_invocations: 0.0005,
  aggregator_ms_per_invocation: 1000.4,
  request_bytes: 60,
  response_bytes: 70,
  audit_bytes: 67,
};
const clicks: ClickTraffic = {
  http_requests: 1,
  dynamodb_write_units: 3,
  dynamodb_read_units: 1.5,
  request_bytes: 500,
  response_bytes: 700,
};

describe('the AWS cost of the measured traffic', () => {
  it('prices a million events service by service at the list prices', () => {
    const { total, breakdown } = eventCost(traffic, { memoryMb: 512, ms: 61.2 }, { memoryMb: 1024, ms: 1000.4 });
    // 1.2 WRU x $0.625 + 0.5 RRU x $0.125 per million
    expect(breakdown.dynamodb).toBeCloseTo(0.8125, 9);
    // 25,000 PUTs at $0.005 per 1,000 and 25,000 GETs at $0.0004 per 1,000
    expect(breakdown.s3).toBeCloseTo(0.135, 9);
    // 27,500 requests at $0.40 per million
    expect(breakdown.sqs).toBeCloseTo(0.011, 9);
    // 25,000 x ($0.20/M + 0.5 GB x 0.062 s x $0.0000133334) + 500 x ($0.20/M + 1 GB x 1.001 s x $0.0000133334)
    expect(breakdown.lambda).toBeCloseTo(0.0153333854 + 0.0067733667, 8);
    expect(breakdown.api_gateway).toBeCloseTo(0.025, 9);
    // 25,000 requests at $0.01 per 10,000, 60 MB to the origin at $0.02/GiB, 70 MB out at $0.085/GiB
    expect(breakdown.cloudfront).toBeCloseTo(0.025 + 0.0011175871 + 0.0055413693, 8);
    expect(total).toBeCloseTo(1.0372657085, 7);
  });

  it('prices a million clicks without S3, SQS or API Gateway (CloudFront calls the function URL, issue 41)', () => {
    const { total, breakdown } = clickCost(clicks, { memoryMb: 512, ms: 8.1 });
    expect(breakdown).toEqual(expect.objectContaining({ s3: 0, sqs: 0, api_gateway: 0 }));
    expect(breakdown.dynamodb).toBeCloseTo(2.0625, 9);
    expect(breakdown.lambda).toBeCloseTo(0.2600003, 7);
    expect(breakdown.cloudfront).toBeCloseTo(1 + 0.0093132257 + 0.055413693, 8);
    // $4.3872272188 with API Gateway's $1.00 per million, as before issue 41.
    expect(total).toBeCloseTo(3.3872272188, 7);
  });

  it('still prices the API Gateway request of each event batch', () => {
    expect(eventCost(traffic, { memoryMb: 512, ms: 61.2 }, { memoryMb: 1024, ms: 1000.4 }).breakdown.api_gateway).toBeCloseTo(0.025, 9);
  });

  it('bills a Lambda duration in whole milliseconds, rounded up', () => {
    expect(lambdaInvocationUsd({ memoryMb: 1024, ms: 0.2 })).toBeCloseTo(0.2 / 1e6 + 0.001 * PRICES.lambda.arm_per_gb_second, 15);
    expect(lambdaInvocationUsd({ memoryMb: 1024, ms: 1 })).toBe(lambdaInvocationUsd({ memoryMb: 1024, ms: 0.2 }));
  });

  it('takes each function memory from the manifest, else the construct default', () => {
    expect(memoryOf('aggregator')).toBe(1024);
    expect(memoryOf('ingest')).toBe(512);
    expect(memoryOf('link-redirect')).toBe(512);
  });
});

describe('the bench --json contract', () => {
  const complete = (): Record<string, Figure> => ({
    ingest_cpu_ratio: 0.43,
    e2e_events_per_s: 1278,
    e2e_event_p99_ms: 906,
    e2e_clicks_per_s: 188,
    wcu_per_event: 1.194,
    wcu_per_click: 3,
    report_p95_ms: {
      one_day: 8.2,
      cohorts_365: 11.4,
      attribution_365: 28.1,
      performance_30d_day_partner: 21.5,
      performance_30d_campaign_country: 98.3,
      performance_365d_partner: 40.2,
    },
    bundles: [{ name: 'ingest', bytes: 67697, load_ms: 83.1 }],
    cost_per_million_events_usd: 1.04,
    wcu_per_event_by_batch: { '1': 9.2, '10': 2, '50': 1.2 },
    hottest_key_wcu_per_s_at_10k: { '1': 12500, '10': 2500, '50': 1250 },
    max_aggregate_item_bytes: 25000,
    cost_per_million_events_usd_by_batch: { '1': 3.3, '10': 1.3, '50': 0.97 },
    stream_cost_per_million_events_usd: 0.075,
    export_cost_per_million_events_usd: 0.002,
    export_s_per_million_events: 24.2,
    first_launch_ms: { first_p50: 19.4, first_p95: 68.4, repeat_p50: 7.1, repeat_p95: 32.2 },
    sdk_web_gzip_bytes: 9_700,
  });

  it('holds for a figures object with every required key', () => {
    expect(contractViolations(complete())).toEqual([]);
  });

  it('names each missing or malformed figure', () => {
    const figures = complete();
    delete figures.e2e_events_per_s;
    figures.report_p95_ms = {
      one_day: 8.2,
      cohorts_365: 11.4,
      performance_30d_day_partner: 21.5,
      performance_30d_campaign_country: 98.3,
      performance_365d_partner: 40.2,
    };
    figures.bundles = [{ name: 'ingest', bytes: 67697 }];
    expect(contractViolations(figures)).toEqual([
      'e2e_events_per_s is not a finite number: undefined',
      'report_p95_ms.attribution_365 is not a finite number',
      'bundles entry lacks name, bytes or load_ms: {"name":"ingest","bytes":67697}',
    ]);
  });

  it('gets its cost keys from the cost phase', () => {
    const figures: Record<string, Figure> = complete();
    delete figures.cost_per_million_events_usd;
    delete figures.cost_per_million_events_usd_by_batch;
    costFigures((_name, _figure, values) => Object.assign(figures, values), {
      trafficPerEvent: traffic,
      trafficPerClick: clicks,
      ingestMs: 61.2,
      redirectMs: 8.1,
      byBatch: {
        '1': { traffic: { ...traffic, http_requests: 1 }, ingestMs: 20 },
        '10': { traffic: { ...traffic, http_requests: 0.1 }, ingestMs: 30 },
        '50': { traffic, ingestMs: 61.2 },
      },
    });
    expect(contractViolations(figures)).toEqual([]);
    expect(figures.cost_per_million_events_usd).toBeCloseTo(1.037, 3);
    expect(figures.cost_per_million_clicks_usd).toBeCloseTo(3.387, 3);
    expect(Object.keys(figures.cost_breakdown_usd as object)).toEqual(['events', 'clicks']);
    expect(Object.keys(REQUIRED_FIGURES)).toContain('cost_per_million_events_usd');
    // One request per event: a million each of CloudFront ($1), API Gateway ($1) and ingest Lambda
    // ($0.20 + 0.5 GB x 0.020 s x $0.0000133334 = $0.333334) on top of the batched traffic's other costs.
    const byBatch = figures.cost_per_million_events_usd_by_batch as Record<string, number>;
    expect(byBatch['1']).toBeCloseTo(3.305, 3);
    // A tenth of that per event at 10: 0.1 x ($0.20 + 0.5 GB x 0.030 s x $0.0000133334) + $0.10 + $0.10.
    expect(byBatch['10']).toBeCloseTo(1.212, 3);
    expect(byBatch['50']).toBeCloseTo(1.037, 3);
  });

  it('requires the raw data figures of issue 22', () => {
    const figures = complete();
    delete figures.stream_cost_per_million_events_usd;
    figures.export_s_per_million_events = Number.NaN;
    expect(contractViolations(figures)).toEqual([
      'stream_cost_per_million_events_usd is not a finite number: undefined',
      'export_s_per_million_events is not a finite number: null',
    ]);
  });

  it('requires the first-launch answer figures of issue 37', () => {
    const figures = complete();
    figures.first_launch_ms = { first_p50: 19.4, repeat_p50: 7.1, repeat_p95: 32.2 };
    expect(contractViolations(figures)).toEqual(['first_launch_ms.first_p95 is not a finite number']);
  });

  it('requires the batch-size figures of issue 21', () => {
    const figures = complete();
    delete figures.max_aggregate_item_bytes;
    figures.wcu_per_event_by_batch = { '1': 9.2, '50': 1.2 };
    expect(contractViolations(figures)).toEqual([
      'wcu_per_event_by_batch.10 is not a finite number',
      'max_aggregate_item_bytes is not a finite number: undefined',
    ]);
  });
});
