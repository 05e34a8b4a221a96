import { INGEST_CPU_BATCH, median, sdkBatch } from '../../../bench/ingest-cpu-measure';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';

describe("the ingest CPU bench's SDK batch", () => {
  it('is one install and one device, every event accepted, as an SDK sends it', () => {
    const now = Date.UTC(2026, 10, 29, 12);
    const events = sdkBatch(INGEST_CPU_BATCH, now) as Record<string, unknown>[];
    const judged = judgeEvents(events, now, now);
    expect(judged.accepted).toBe(INGEST_CPU_BATCH);
    expect(new Set(events.map((event) => event.install_uuid)).size).toBe(1);
    expect(new Set(events.map((event) => event.device_id)).size).toBe(1);
    expect(new Set(events.map((event) => event.event_id)).size).toBe(INGEST_CPU_BATCH);
    expect(events.filter((event) => event.event_name === 'ad_revenue').length).toBeGreaterThanOrEqual(INGEST_CPU_BATCH / 5);
  });

  it('reports the middle sample of the processes and blocks', () => {
    expect(median([0.61, 0.52, 0.64, 0.57, 0.6])).toBe(0.6);
    expect(median([3])).toBe(3);
  });
});
