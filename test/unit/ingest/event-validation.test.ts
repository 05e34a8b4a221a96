import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type BatchContext,
  EVENT_RULES,
  judgeEvents,
  MAX_FUTURE_SKEW_MS,
  MAX_PAST_AGE_MS,
  type RejectionReason,
  validateEvent,
} from '../../../functions/domain/ingest/event-validation';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);

function context(skewMs = 0): BatchContext {
  const seen = new Set<string>();
  return { receivedMs: NOW, skewMs, claimEventId: (id) => seen.size !== seen.add(id).size };
}

const reasonOf = (event: unknown, skewMs = 0) => validateEvent(event, context(skewMs));
const event = (overrides: Record<string, unknown> = {}) => validEvent(overrides, NOW);
const install = (overrides: Record<string, unknown> = {}) =>
  event({
    event_name: 'install',
    revenue_usd: undefined,
    attribution: {
      click_id: 'clk_1',
      referrer: 'click_id=clk_1&utm_source=x',
      referrer_click_ms: NOW - 60_000,
      install_begin_ms: NOW - 30_000,
    },
    ...overrides,
  });

const impression = (overrides: Record<string, unknown> = {}) => ({
  source: 'applovin_max',
  network: 'AppLovin',
  format: 'rewarded',
  placement: 'level_end',
  ad_unit: 'unit-1',
  revenue: 0.0123,
  currency: 'USD',
  precision: 'exact',
  impression_id: 'imp-1',
  ...overrides,
});
const adEvent = (overrides: Record<string, unknown> = {}) =>
  event({ event_name: 'ad_revenue', revenue_usd: undefined, ad_revenue: impression(), ...overrides });

const refundEvent = (refund: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) =>
  event({
    event_name: 'refund',
    revenue_usd: undefined,
    refund: { purchase_event_id: 'p-1', revenue: 4.99, currency: 'EUR', ...refund },
    ...overrides,
  });

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { inner: value };
  return value;
}

describe('event validation', () => {
  it('accepts a complete event and an install with attribution', () => {
    expect(reasonOf(event())).toBeUndefined();
    expect(reasonOf(install())).toBeUndefined();
    expect(reasonOf(event({ device_id: 'idfv-1', unknown_field: { kept: true } }))).toBeUndefined();
  });

  it('treats null optional fields as absent', () => {
    expect(reasonOf(event({ revenue_usd: null, platform: null, device_id: null, properties: null, attribution: null }))).toBeUndefined();
  });

  const cases: [string, unknown, RejectionReason][] = [
    ['a number entry', 42, 'bad_event'],
    ['a null entry', null, 'bad_event'],
    ['an array entry', [event()], 'bad_event'],
    ['an event nested deeper than 32 levels', event({ extra: nested(40) }), 'bad_event'],
    ['a missing event_id', event({ event_id: undefined }), 'bad_event_id'],
    ['an empty event_id', event({ event_id: '' }), 'bad_event_id'],
    ['an event_id of 129 characters', event({ event_id: 'a'.repeat(129) }), 'bad_event_id'],
    ['an event_id with a space', event({ event_id: 'a b' }), 'bad_event_id'],
    ['a numeric event_id', event({ event_id: 7 }), 'bad_event_id'],
    ['a missing event_name', event({ event_name: undefined }), 'bad_event_name'],
    ['an event_name of 65 characters', event({ event_name: 'n'.repeat(65) }), 'bad_event_name'],
    ['an event_name with a slash', event({ event_name: 'a/b' }), 'bad_event_name'],
    ['a missing install_uuid', event({ install_uuid: undefined }), 'bad_install_uuid'],
    ['an install_uuid that is not a UUID', event({ install_uuid: 'not-a-uuid' }), 'bad_install_uuid'],
    ['a UUID without dashes', event({ install_uuid: '0b9f8c6a1c2d4e5f8a9b0c1d2e3f4a5b' }), 'bad_install_uuid'],
    ['a missing ts_ms', event({ ts_ms: undefined }), 'bad_timestamp'],
    ['a fractional ts_ms', event({ ts_ms: NOW + 0.5 }), 'bad_timestamp'],
    ['a ts_ms as a string', event({ ts_ms: String(NOW) }), 'bad_timestamp'],
    ['a ts_ms more than an hour ahead', event({ ts_ms: NOW + MAX_FUTURE_SKEW_MS + 1 }), 'bad_timestamp'],
    ['a ts_ms more than 90 days old', event({ ts_ms: NOW - MAX_PAST_AGE_MS - 1 }), 'bad_timestamp'],
    ['a negative revenue', event({ revenue_usd: -1 }), 'bad_revenue'],
    ['a revenue over one million', event({ revenue_usd: 1_000_000.01 }), 'bad_revenue'],
    ['a revenue as a string', event({ revenue_usd: '4.99' }), 'bad_revenue'],
    ['an install without platform', install({ platform: undefined }), 'bad_platform'],
    ['a platform of web', event({ platform: 'web' }), 'bad_platform'],
    ['an upper-case platform', event({ platform: 'IOS' }), 'bad_platform'],
    ['an empty device_id', event({ device_id: '' }), 'bad_device_id'],
    ['a device_id of 129 characters', event({ device_id: 'd'.repeat(129) }), 'bad_device_id'],
    ['a numeric device_id', event({ device_id: 12345 }), 'bad_device_id'],
    ['attribution on an event that is not an install', event({ attribution: { click_id: 'clk_1' } }), 'bad_attribution'],
    ['attribution that is not an object', install({ attribution: 'clk_1' }), 'bad_attribution'],
    ['an attribution click_id that is not a string', install({ attribution: { click_id: 5 } }), 'bad_attribution'],
    ['an attribution install_begin_ms that is negative', install({ attribution: { install_begin_ms: -5 } }), 'bad_attribution'],
    ['properties that are an array', event({ properties: ['a'] }), 'bad_properties'],
    ['properties with a nested object', event({ properties: { a: { b: 1 } } }), 'bad_properties'],
    [
      'properties with 51 keys',
      event({ properties: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }),
      'bad_properties',
    ],
    ['properties over 4 KiB as JSON', event({ properties: { blob: 'x'.repeat(4100) } }), 'bad_properties'],
    ['an ad_revenue event without its object', adEvent({ ad_revenue: undefined }), 'bad_ad_revenue'],
    ['an ad_revenue object on another event', event({ ad_revenue: impression() }), 'bad_ad_revenue'],
    ['an ad_revenue event with revenue_usd of its own', adEvent({ revenue_usd: 1 }), 'bad_ad_revenue'],
    ['an unknown ad revenue source', adEvent({ ad_revenue: impression({ source: 'max' }) }), 'bad_ad_revenue'],
    ['an ad network of 65 characters', adEvent({ ad_revenue: impression({ network: 'n'.repeat(65) }) }), 'bad_ad_revenue'],
    ['an unknown ad format', adEvent({ ad_revenue: impression({ format: 'video' }) }), 'bad_ad_revenue'],
    ['a placement of 257 characters', adEvent({ ad_revenue: impression({ placement: 'p'.repeat(257) }) }), 'bad_ad_revenue'],
    ['a negative impression revenue', adEvent({ ad_revenue: impression({ revenue: -0.01 }) }), 'bad_ad_revenue'],
    ['an impression revenue as a string', adEvent({ ad_revenue: impression({ revenue: '0.01' }) }), 'bad_ad_revenue'],
    ['a lower-case impression currency', adEvent({ ad_revenue: impression({ currency: 'usd' }) }), 'bad_ad_revenue'],
    ['an unknown precision', adEvent({ ad_revenue: impression({ precision: 'rough' }) }), 'bad_ad_revenue'],
    ['an impression_id with a space', adEvent({ ad_revenue: impression({ impression_id: 'a b' }) }), 'bad_ad_revenue'],
    ['an impression_id of 129 characters', adEvent({ ad_revenue: impression({ impression_id: 'i'.repeat(129) }) }), 'bad_ad_revenue'],
  ];

  it.each(cases)('rejects %s', (_name, entry, reason) => {
    expect(reasonOf(entry)).toBe(reason);
  });

  it('accepts the boundaries: 128-character ids, 50 properties, revenue 0 and 1,000,000, exactly 1 hour ahead and 90 days back', () => {
    expect(reasonOf(event({ event_id: 'a'.repeat(128) }))).toBeUndefined();
    expect(reasonOf(event({ properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])) }))).toBeUndefined();
    expect(reasonOf(event({ revenue_usd: 0 }))).toBeUndefined();
    expect(reasonOf(event({ revenue_usd: 1_000_000 }))).toBeUndefined();
    expect(reasonOf(event({ ts_ms: NOW + MAX_FUTURE_SKEW_MS }))).toBeUndefined();
    expect(reasonOf(event({ ts_ms: NOW - MAX_PAST_AGE_MS }))).toBeUndefined();
    expect(reasonOf(event({ install_uuid: '0B9F8C6A-1C2D-4E5F-8A9B-0C1D2E3F4A5B' }))).toBeUndefined();
  });

  it('accepts an ad_revenue event, with or without placement and ad unit, at 0 and at every source, format and precision', () => {
    expect(reasonOf(adEvent())).toBeUndefined();
    expect(reasonOf(adEvent({ ad_revenue: impression({ placement: null, ad_unit: undefined, revenue: 0 }) }))).toBeUndefined();
    for (const source of ['applovin_max', 'ironsource_levelplay', 'admob', 'unity', 'custom'])
      for (const format of ['banner', 'interstitial', 'rewarded', 'app_open', 'native', 'other'])
        for (const precision of ['exact', 'estimated', 'publisher_defined'])
          expect(reasonOf(adEvent({ ad_revenue: impression({ source, format, precision }) }))).toBeUndefined();
    expect(reasonOf(adEvent({ ad_revenue: impression({ impression_id: `!~${'i'.repeat(126)}` }) }))).toBeUndefined();
  });

  it('names the member of an ad_revenue event at fault, in the rule order', () => {
    const fieldOf = (entry: unknown) => judgeEvents([entry], NOW, NOW).verdicts[0]?.field;
    expect(fieldOf(adEvent({ ad_revenue: impression({ network: '', format: 'x' }) }))).toBe('ad_revenue.network');
    expect(fieldOf(adEvent({ ad_revenue: impression({ ad_unit: 5 }) }))).toBe('ad_revenue.ad_unit');
    expect(fieldOf(adEvent({ ad_revenue: impression({ revenue: Infinity }) }))).toBe('ad_revenue.revenue');
    expect(fieldOf(adEvent({ ad_revenue: impression({ currency: 'XYZ' }) }))).toBe('ad_revenue.currency');
    expect(fieldOf(adEvent({ ad_revenue: impression({ impression_id: '' }) }))).toBe('ad_revenue.impression_id');
    expect(fieldOf(adEvent({ ad_revenue: [] }))).toBe('ad_revenue');
    expect(fieldOf(adEvent({ revenue_usd: 2 }))).toBe('revenue_usd');
    expect(fieldOf(event({ ad_revenue: impression() }))).toBe('ad_revenue');
  });

  it('accepts a refund naming its purchase by event id, by transaction id or both, and a purchase carrying a transaction id', () => {
    expect(reasonOf(refundEvent())).toBeUndefined();
    expect(reasonOf(refundEvent({ purchase_event_id: null, transaction_id: 'GPA.3372-4150-9088-12345' }))).toBeUndefined();
    expect(reasonOf(refundEvent({ transaction_id: `!~${'t'.repeat(126)}` }))).toBeUndefined();
    expect(reasonOf(event({ transaction_id: '1000000123456789' }))).toBeUndefined();
  });

  it.each([
    ['a refund event without its object', refundEvent({}, { refund: undefined }), 'refund'],
    ['a refund object on another event', event({ refund: { purchase_event_id: 'p-1', revenue: 1, currency: 'USD' } }), 'refund'],
    ['a refund with revenue_usd of its own', refundEvent({}, { revenue_usd: 1 }), 'revenue_usd'],
    ['a refund with a currency of its own', refundEvent({}, { currency: 'USD', revenue: 1 }), 'currency'],
    ['a refund naming no purchase', refundEvent({ purchase_event_id: undefined }), 'refund.purchase_event_id'],
    ['a refund naming a purchase by a bad event id', refundEvent({ purchase_event_id: 'p 1' }), 'refund.purchase_event_id'],
    ['a refund with a transaction id of 129 characters', refundEvent({ transaction_id: 't'.repeat(129) }), 'refund.transaction_id'],
    ['a refund of 0', refundEvent({ revenue: 0 }), 'refund.revenue'],
    ['a negative refund', refundEvent({ revenue: -4.99 }), 'refund.revenue'],
    ['a refund amount as a string', refundEvent({ revenue: '4.99' }), 'refund.revenue'],
    ['a refund in a lower-case currency', refundEvent({ currency: 'eur' }), 'refund.currency'],
  ])('rejects %s as bad_refund, naming %#', (_, entry, field) => {
    expect(judgeEvents([entry], NOW, NOW).verdicts[0]).toMatchObject({ status: 'rejected', reason: 'bad_refund', field });
  });

  it.each([
    ['', 'empty'],
    ['a b', 'with a space'],
    ['t'.repeat(129), 'of 129 characters'],
    ['é', 'not ASCII'],
    [42, 'a number'],
  ])('rejects a transaction_id %j (%s) as bad_transaction_id', (transactionId: unknown, _kind: string) => {
    expect(judgeEvents([event({ transaction_id: transactionId })], NOW, NOW).verdicts[0]).toMatchObject({
      reason: 'bad_transaction_id',
      field: 'transaction_id',
    });
  });

  it('gives the reason of the first failing rule in the documented order', () => {
    const failing: Record<RejectionReason, Record<string, unknown>> = {
      bad_event: { extra: nested(40) },
      bad_event_id: { event_id: '' },
      bad_event_name: { event_name: '' },
      bad_install_uuid: { install_uuid: 'x' },
      bad_timestamp: { ts_ms: 'x' },
      bad_revenue: { revenue_usd: -1 },
      bad_currency: { currency: 'XYZ', revenue: 1 },
      bad_platform: { platform: 'web' },
      bad_device_id: { device_id: '' },
      bad_attribution: { attribution: 'x' },
      bad_properties: { properties: 'x' },
      bad_ad_revenue: { ad_revenue: 'x' },
      bad_consent: { consent: { measurement: 'yes' } },
      bad_transaction_id: { transaction_id: '' },
      bad_refund: { refund: 'x' },
    };
    const order = EVENT_RULES.map((rule) => rule.reason);
    for (let i = 0; i < order.length; i++) {
      const all = Object.assign({}, ...order.slice(i).map((reason) => failing[reason]));
      expect(reasonOf(event(all))).toBe(order[i]);
    }
  });

  it('corrects the device clock by the batch skew before judging the timestamp', () => {
    // The device clock runs 3 hours slow: its ts_ms and sent_at_ms are both 3 hours behind.
    const slow = 3 * 60 * 60 * 1000;
    const { verdicts } = judgeEvents([event({ ts_ms: NOW - slow - 1000 })], NOW - slow, NOW);
    expect(verdicts[0]).toMatchObject({ status: 'accepted', corrected_ts: NOW - 1000 });

    // A device clock 2 hours fast without correction would put the event in the future.
    const fast = 2 * 60 * 60 * 1000;
    expect(judgeEvents([event({ ts_ms: NOW + fast })], NOW + fast, NOW).verdicts[0]).toMatchObject({
      status: 'accepted',
      corrected_ts: NOW,
    });
    expect(judgeEvents([event({ ts_ms: NOW + fast })], NOW, NOW).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: 'bad_timestamp',
    });
  });

  it('rejects a later duplicate event_id within the batch and keeps the first', () => {
    const first = event({ event_id: 'same' });
    const { verdicts, accepted, rejected } = judgeEvents([first, event({ event_id: 'same' }), event({ event_id: 'other' })], NOW, NOW);
    expect(verdicts.map((v) => [v.event_id, v.status, v.reason])).toEqual([
      ['same', 'accepted', undefined],
      ['same', 'rejected', 'bad_event_id'],
      ['other', 'accepted', undefined],
    ]);
    expect([accepted, rejected]).toEqual([2, 1]);
  });

  it('answers in input order with counts that match the results, echoing only sensible event ids', () => {
    const entries = [event({ event_id: 'a' }), 'junk', event({ event_id: 'b', platform: 'web' }), event({ event_id: 'x'.repeat(500) })];
    const { verdicts, accepted, rejected } = judgeEvents(entries, NOW, NOW);
    expect(verdicts.map((v) => [v.index, v.event_id, v.status, v.reason])).toEqual([
      [0, 'a', 'accepted', undefined],
      [1, '', 'rejected', 'bad_event'],
      [2, 'b', 'rejected', 'bad_platform'],
      [3, '', 'rejected', 'bad_event_id'],
    ]);
    expect(accepted).toBe(verdicts.filter((v) => v.status === 'accepted').length);
    expect(rejected).toBe(verdicts.filter((v) => v.status === 'rejected').length);
  });

  it('is the table docs/ingestion.md shows, row for row', () => {
    const docs = readFileSync(join(__dirname, '../../../docs/ingestion.md'), 'utf8');
    for (const rule of EVENT_RULES) {
      expect(docs).toContain(`| ${rule.field} | ${rule.rule} | \`${rule.reason}\` |`);
    }
  });
});

describe('the field a rejection names', () => {
  /** The reason and field of one event's verdict, in a batch stamped sent_at_ms and received at NOW. */
  const faultOf = (entry: unknown, sentAtMs = NOW) => {
    const [{ reason, field }] = judgeEvents([entry], sentAtMs, NOW).verdicts;
    return { reason, field };
  };

  it("is the rule's own field, and none for an entry that is not an event", () => {
    expect(faultOf(event({ event_id: 7 }))).toEqual({ reason: 'bad_event_id', field: 'event_id' });
    expect(faultOf(event({ event_name: 'a/b' }))).toEqual({ reason: 'bad_event_name', field: 'event_name' });
    expect(faultOf(event({ install_uuid: 'x' }))).toEqual({ reason: 'bad_install_uuid', field: 'install_uuid' });
    expect(faultOf(event({ revenue_usd: -1 }))).toEqual({ reason: 'bad_revenue', field: 'revenue_usd' });
    expect(faultOf(event({ platform: 'web' }))).toEqual({ reason: 'bad_platform', field: 'platform' });
    expect(faultOf(event({ device_id: '' }))).toEqual({ reason: 'bad_device_id', field: 'device_id' });
    expect(faultOf(event({ properties: ['a'] }))).toEqual({ reason: 'bad_properties', field: 'properties' });
    expect(faultOf(42)).toEqual({ reason: 'bad_event', field: undefined });
    expect(faultOf(event({ extra: nested(40) }))).toEqual({ reason: 'bad_event', field: undefined });
  });

  it('names the later of two events with one id', () => {
    const { verdicts } = judgeEvents([event({ event_id: 'same' }), event({ event_id: 'same' })], NOW, NOW);
    expect(verdicts.map(({ reason, field }) => ({ reason, field }))).toEqual([
      { reason: undefined, field: undefined },
      { reason: 'bad_event_id', field: 'event_id' },
    ]);
  });

  it('names the member of attribution at fault, or attribution itself', () => {
    expect(faultOf(event({ attribution: { click_id: 'clk_1' } }))).toEqual({ reason: 'bad_attribution', field: 'attribution' });
    expect(faultOf(install({ attribution: 'clk_1' }))).toEqual({ reason: 'bad_attribution', field: 'attribution' });
    expect(faultOf(install({ attribution: { click_id: 5 } }))).toEqual({ reason: 'bad_attribution', field: 'attribution.click_id' });
    expect(faultOf(install({ attribution: { referrer: 'r'.repeat(2049) } }))).toEqual({
      reason: 'bad_attribution',
      field: 'attribution.referrer',
    });
    expect(faultOf(install({ attribution: { referrer_click_ms: 1.5 } }))).toEqual({
      reason: 'bad_attribution',
      field: 'attribution.referrer_click_ms',
    });
    expect(faultOf(install({ attribution: { click_id: 'c', install_begin_ms: -5 } }))).toEqual({
      reason: 'bad_attribution',
      field: 'attribution.install_begin_ms',
    });
    // Two members at fault: the first in the rule's order.
    expect(faultOf(install({ attribution: { install_begin_ms: -5, click_id: '' } }))).toEqual({
      reason: 'bad_attribution',
      field: 'attribution.click_id',
    });
  });

  it('names ts_ms for a time that is out of range as sent, and for one that is not an integer', () => {
    expect(faultOf(event({ ts_ms: undefined }))).toEqual({ reason: 'bad_timestamp', field: 'ts_ms' });
    expect(faultOf(event({ ts_ms: String(NOW) }))).toEqual({ reason: 'bad_timestamp', field: 'ts_ms' });
    expect(faultOf(event({ ts_ms: NOW + MAX_FUTURE_SKEW_MS + 1 }))).toEqual({ reason: 'bad_timestamp', field: 'ts_ms' });
    expect(faultOf(event({ ts_ms: NOW - MAX_PAST_AGE_MS - 1 }))).toEqual({ reason: 'bad_timestamp', field: 'ts_ms' });
    // In seconds, on a batch stamped in milliseconds.
    expect(faultOf(event({ ts_ms: Math.floor(NOW / 1000) }))).toEqual({ reason: 'bad_timestamp', field: 'ts_ms' });
  });

  it('names sent_at_ms when only the correction by it puts a good ts_ms out of range: a stamp in seconds, or one kept from an earlier attempt', () => {
    expect(faultOf(event({ ts_ms: NOW - 60_000 }), Math.floor(NOW / 1000))).toEqual({ reason: 'bad_timestamp', field: 'sent_at_ms' });
    expect(faultOf(event({ ts_ms: NOW - 60_000 }), 0)).toEqual({ reason: 'bad_timestamp', field: 'sent_at_ms' });
    const threeDays = 3 * 24 * 60 * 60 * 1000;
    expect(faultOf(event({ ts_ms: NOW - 60_000 }), NOW - threeDays)).toEqual({ reason: 'bad_timestamp', field: 'sent_at_ms' });
    // A device clock 2 hours fast, stamped on the same clock: corrected, accepted.
    const fast = 2 * 60 * 60 * 1000;
    expect(faultOf(event({ ts_ms: NOW + fast }), NOW + fast)).toEqual({ reason: undefined, field: undefined });
  });

  it('is on rejected verdicts only, whatever the order of the rules an event breaks', () => {
    const entries = [event(), event({ event_name: '', platform: 'web' }), install({ platform: undefined, attribution: { click_id: 5 } })];
    expect(judgeEvents(entries, NOW, NOW).verdicts.map(({ status, field }) => [status, field])).toEqual([
      ['accepted', undefined],
      ['rejected', 'event_name'],
      ['rejected', 'platform'],
    ]);
  });
});
