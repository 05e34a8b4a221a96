import { MemoryFxRates } from '../../../functions/adapters/memory/fx-rates';
import type { AggregationMessage, AuditLine } from '../../../functions/domain/audit/types';
import { AdRevenueUploadError, impressionEvent, takeImpressions } from '../../../functions/domain/ingest/ad-revenue-upload';
import type { TakeBatchPorts } from '../../../functions/domain/ingest/take-batch';
import { MemoryCapStore } from '../../support/memory-cap-store';

const NOW = Date.UTC(2026, 2, 10, 12, 0);
const UUID = '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
const company = { company_id: 'com_1', monthly_cap: null, suspended: false };

function world() {
  const audits: AuditLine[][] = [];
  const messages: AggregationMessage[] = [];
  const ports: TakeBatchPorts = {
    caps: new MemoryCapStore(),
    audit: { putBatch: async (_key, _batch, record) => void audits.push(record.lines()), bucket: 'audit-bucket' },
    aggregation: { send: async (message) => void messages.push(message) },
    enrichment: { send: () => Promise.reject(new Error('an impression never waits for Apple')) },
    rates: new MemoryFxRates({ '2026-03-10': { EUR: 1.1 } }),
    failed: () => undefined,
  };
  const take = (body: unknown, over: Partial<typeof company> = {}) =>
    takeImpressions(ports, {
      appId: 'app_1',
      company: { ...company, ...over },
      raw: Buffer.from(JSON.stringify(body)),
      body,
      clientIp: '203.0.113.1',
      receivedMs: NOW,
    });
  return { audits, messages, take };
}

const row = (impressionId: string, extra: object = {}) => ({
  install_uuid: UUID,
  ts_ms: NOW - 60_000,
  ad_revenue: {
    source: 'admob',
    network: 'AdMob',
    format: 'banner',
    revenue: 0.002,
    currency: 'EUR',
    precision: 'estimated',
    impression_id: impressionId,
  },
  ...extra,
});

describe('POST /api/v1/ad-revenue, its use case', () => {
  it('takes each impression as an ad_revenue event of its install, converted, with a result per row in order', async () => {
    const { audits, messages, take } = world();
    const answer = await take({ impressions: [row('r-1'), row('r-1'), row('r 2'), 'junk'] });
    expect(answer).toMatchObject({ accepted: 2, rejected: 2 });
    expect(answer.results).toEqual([
      { index: 0, status: 'accepted', reason: undefined, field: undefined },
      { index: 1, status: 'accepted', reason: undefined, field: undefined },
      { index: 2, status: 'rejected', reason: 'bad_ad_revenue', field: 'ad_revenue.impression_id' },
      { index: 3, status: 'rejected', reason: 'bad_event', field: undefined },
    ]);
    // Two rows of one impression are two events (distinct ids): the aggregator counts the impression once.
    const events = audits[0]?.slice(0, 2).map((line) => line.event as Record<string, unknown>);
    expect(events?.map((e) => e.event_name)).toEqual(['ad_revenue', 'ad_revenue']);
    expect(events?.[0]?.event_id).not.toBe(events?.[1]?.event_id);
    expect(events?.[0]).toMatchObject({ install_uuid: UUID, revenue_usd: 0.0022 });
    expect(messages).toHaveLength(1);
  });

  it('ignores members other than the impression, and makes a valid event id of any impression_id', () => {
    const event = impressionEvent(row('imp/ü', { device_id: 'd-1', properties: { a: 1 } }), 7) as Record<string, unknown>;
    expect(Object.keys(event).sort()).toEqual(['ad_revenue', 'event_id', 'event_name', 'install_uuid', 'ts_ms']);
    expect(event.event_id).toMatch(/^s2s\.[0-9a-f]{32}\.7$/);
  });

  it.each([
    ['a body that is not an object', [row('r-1')]],
    ['no impressions', { impressions: [] }],
    ['impressions that are not an array', { impressions: row('r-1') }],
    ['more than 1,000 impressions', { impressions: Array.from({ length: 1001 }, (_, i) => row(`r-${i}`)) }],
  ])('refuses %s with bad_batch_shape, storing nothing', async (_name, body) => {
    const { audits, take } = world();
    await expect(take(body)).rejects.toEqual(new AdRevenueUploadError('bad_batch_shape'));
    expect(audits).toEqual([]);
  });

  it("refuses a suspended company's impressions with company_suspended, storing nothing", async () => {
    const { audits, take } = world();
    await expect(take({ impressions: [row('r-1')] }, { suspended: true })).rejects.toMatchObject({
      statusCode: 401,
      code: 'company_suspended',
    });
    expect(audits).toEqual([]);
  });
});
