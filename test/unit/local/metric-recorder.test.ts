import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { addEmf, recordedHours, recordMetrics } from '../../../local/metric-recorder';

const HOUR = 3_600_000;

describe("the local runtime's metric recorder", () => {
  it('sums what functions publish per hour, with metrics off as the runtime runs them', () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    recordMetrics();
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    const before = recordedHours(hour, hour + HOUR).get(hour) ?? {};
    const metrics = new Metrics({ namespace: 'Test', serviceName: 'attribution' });
    metrics.addMetric('TestAccepted', MetricUnit.Count, 3);
    metrics.addMetric('TestAccepted', MetricUnit.Count, 4);
    metrics.publishStoredMetrics();
    const single = metrics.singleMetric();
    single.addDimension('outcome', 'failed');
    single.addMetric('TestSettled', MetricUnit.Count, 1);
    const after = recordedHours(hour, hour + HOUR).get(hour) ?? {};
    // Another hour of this process (the start of a run, a metric at an hour boundary) may hold the others.
    expect((after.TestAccepted ?? 0) - (before.TestAccepted ?? 0)).toBe(7);
    expect((after['TestSettled{outcome=failed}'] ?? 0) - (before['TestSettled{outcome=failed}'] ?? 0)).toBe(1);
    expect(after.TestSettled).toBeUndefined();
  });

  it('keeps the hours of the EMF timestamps and answers only those asked for', () => {
    const emf = (at: number, value: number) => ({
      _aws: { Timestamp: at, CloudWatchMetrics: [{ Dimensions: [['service']], Metrics: [{ Name: 'TestHours' }] }] },
      service: 'attribution',
      TestHours: value,
    });
    const base = Date.UTC(2020, 0, 1);
    addEmf(emf(base + 10, 2));
    addEmf(emf(base + HOUR - 1, 5));
    addEmf(emf(base + HOUR, 11));
    expect(recordedHours(base, base + HOUR).get(base)?.TestHours).toBe(7);
    expect(recordedHours(base, base + HOUR).has(base + HOUR)).toBe(false);
    expect(recordedHours(base + HOUR, base + 2 * HOUR).get(base + HOUR)?.TestHours).toBe(11);
  });
});
