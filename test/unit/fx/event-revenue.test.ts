import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { MemoryFxRates } from '../../../functions/adapters/memory/fx-rates';
import { toJsonLines } from '../../../functions/domain/audit/encode';
import { eventTexts } from '../../../functions/domain/audit/event-text';
import { auditLines } from '../../../functions/domain/audit/lines';
import { auditRecord } from '../../../functions/domain/audit/record';
import type { AuditBatch } from '../../../functions/domain/audit/types';
import { convertRevenue } from '../../../functions/domain/fx/event-revenue';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 2, 10, 12, 0);
const batch: AuditBatch = { companyId: 'com_1', appId: 'app_1', receivedMs: NOW, bodySha256: 'x', clientIp: '203.0.113.9' };
const priced = (overrides: Record<string, unknown>) =>
  validEvent({ revenue_usd: undefined, revenue: 10, currency: 'EUR', ...overrides }, NOW - 1000);

/** The batch judged and converted with these rates, as takeBatch does it. */
async function take(events: unknown[], rates = new MemoryFxRates({ '2025-03-10': { EUR: 1.08, JPY: 0.0066 } })) {
  const judged = judgeEvents(events, NOW, NOW);
  return { rates, ...(await convertRevenue(rates, events, judged)) };
}

describe('revenue in a currency at ingest', () => {
  it('converts at the rate of the event day and keeps the amount and currency', async () => {
    const { verdicts, accepted, conversions } = await take([priced({}), priced({ revenue: 1000, currency: 'JPY' })]);
    expect(accepted).toBe(2);
    expect(verdicts.map((v) => v.status)).toEqual(['accepted', 'accepted']);
    expect(conversions.get(0)).toEqual({ revenueUsd: 10.8, fx: { currency: 'EUR', amount: 10, rate: 1.08, rate_day: '2025-03-10' } });
    expect(conversions.get(1)?.revenueUsd).toBe(6.6);
  });

  it.each([
    ['an unknown code', { currency: 'XYZ' }, 'currency'],
    ['a lower-case code', { currency: 'eur' }, 'currency'],
    ['revenue_usd as well', { revenue_usd: 10.8 }, 'revenue_usd'],
    ['a currency without revenue', { revenue: undefined }, 'revenue'],
    ['a negative revenue', { revenue: -1 }, 'revenue'],
    ['a revenue as a string', { revenue: '10' }, 'revenue'],
  ])('rejects %s with bad_currency, reading no rates', async (_name, overrides, field) => {
    const { verdicts, accepted, rejected, rates } = await take([priced(overrides), validEvent({}, NOW - 1000)]);
    expect(verdicts[0]).toMatchObject({ status: 'rejected', reason: 'bad_currency', field });
    expect(verdicts[1]?.status).toBe('accepted');
    expect({ accepted, rejected }).toEqual({ accepted: 1, rejected: 1 });
    expect(rates.reads).toEqual([]);
  });

  it('rejects a currency with no rate within the 7 days, and one that converts to more than 1,000,000 dollars', async () => {
    const rates = new MemoryFxRates({ '2025-03-02': { GBP: 1.3 }, '2025-03-10': { EUR: 1.08 } });
    const { verdicts, accepted, rejected } = await take([priced({ currency: 'GBP' }), priced({ revenue: 999_999 }), priced({})], rates);
    expect(verdicts[0]).toMatchObject({ status: 'rejected', reason: 'bad_currency', field: 'currency' });
    expect(verdicts[1]).toMatchObject({ status: 'rejected', reason: 'bad_currency', field: 'revenue' });
    expect(verdicts[2]?.status).toBe('accepted');
    expect({ accepted, rejected }).toEqual({ accepted: 1, rejected: 2 });
  });

  it("converts an ad impression's revenue to the event's revenue_usd, refusing no rate and more than 100 dollars", async () => {
    const impression = (ad: Record<string, unknown>) =>
      validEvent(
        {
          event_name: 'ad_revenue',
          revenue_usd: undefined,
          ad_revenue: {
            source: 'ironsource_levelplay',
            network: 'ironSource',
            format: 'interstitial',
            revenue: 0.02,
            currency: 'EUR',
            precision: 'estimated',
            impression_id: 'auction-1',
            ...ad,
          },
        },
        NOW - 1000,
      );
    const events = [
      impression({}),
      impression({ currency: 'USD', revenue: 0.0000126 }),
      impression({ currency: 'GBP' }),
      impression({ revenue: 93 }),
    ];
    const { verdicts, conversions } = await take(events);
    expect(conversions.get(0)).toEqual({
      revenueUsd: 0.0216,
      fx: { currency: 'EUR', amount: 0.02, rate: 1.08, rate_day: '2025-03-10' },
    });
    // Rounded to the micro-dollar per impression, as any converted revenue.
    expect(conversions.get(1)?.revenueUsd).toBe(0.000013);
    expect(verdicts[2]).toMatchObject({ status: 'rejected', reason: 'bad_currency', field: 'ad_revenue.currency' });
    expect(verdicts[3]).toMatchObject({ status: 'rejected', reason: 'bad_ad_revenue', field: 'ad_revenue.revenue' });
    const lines = auditLines(events, verdicts, batch, conversions);
    expect(lines[0]?.event).toMatchObject({ revenue_usd: 0.0216 });
  });

  it('reads nothing for a batch without a currency (the hot path), and ignores revenue without a currency as an unknown field', async () => {
    const { rates, accepted, conversions } = await take([validEvent({}, NOW), validEvent({ revenue: 3 }, NOW)]);
    expect(accepted).toBe(2);
    expect(conversions.size).toBe(0);
    expect(rates.reads).toEqual([]);
  });

  it('reads the window of every priced day in one read', async () => {
    const yesterday = NOW - 86_400_000;
    const { rates } = await take([priced({}), validEvent({ revenue_usd: undefined, revenue: 1, currency: 'EUR' }, yesterday)]);
    expect(rates.reads).toHaveLength(1);
    expect(rates.reads[0]).toEqual([
      '2025-03-02',
      '2025-03-03',
      '2025-03-04',
      '2025-03-05',
      '2025-03-06',
      '2025-03-07',
      '2025-03-08',
      '2025-03-09',
      '2025-03-10',
    ]);
  });

  it('writes the audit line with the event as sent plus revenue_usd, and fx, the same with either writer', async () => {
    const events = [priced({ device_id: 'dev-1' }), validEvent({}, NOW), priced({ currency: 'XYZ' })];
    const body = Buffer.from(JSON.stringify({ events, sent_at_ms: NOW }));
    const { verdicts, conversions } = await take(events);
    const lines = auditLines(events, verdicts, batch, conversions);
    const { device_id: _cut, ...sent } = events[0] as Record<string, unknown>;
    expect(lines[0]?.event).toEqual({ ...sent, revenue_usd: 10.8 });
    expect(lines[0]?.fx).toEqual({ currency: 'EUR', amount: 10, rate: 1.08, rate_day: '2025-03-10' });
    expect(lines[1]?.fx).toBeUndefined();
    expect(lines[2]).toMatchObject({ status: 'rejected', reason: 'bad_currency', event: events[2] });
    const copied = gunzipSync(await auditRecord(events, verdicts, batch, eventTexts(body, events.length), conversions).encode()).toString(
      'utf8',
    );
    expect(copied).toBe(toJsonLines(lines));
    expect(copied).toBe(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  });

  it.each([
    ['a priced event', {}],
    ['one with a device_id, cut first', { device_id: 'dev-1' }],
    ['one with a null revenue_usd, which keeps its place', { revenue_usd: null }],
    ['one with an own __proto__ member, which stays a member', { ['__proto__']: { polluted: true } }],
    ['one with both a __proto__ member and a device_id', { ['__proto__']: { polluted: true }, device_id: 'dev-1' }],
  ])('writes for %s the event spread with revenue_usd into its audit line, members in order', async (_name, extra) => {
    // Parsed from text, as the handler has them: JSON.parse makes `__proto__` an own member.
    const body = Buffer.from(JSON.stringify({ events: [{ ...priced({}), ...extra }], sent_at_ms: NOW }));
    const events = (JSON.parse(body.toString('utf8')) as { events: Record<string, unknown>[] }).events;
    const { verdicts, conversions } = await take(events);
    const { device_id: _cut, ...sent } = events[0] ?? {};
    const expected = { ...sent, revenue_usd: 10.8 };
    const event = auditLines(events, verdicts, batch, conversions)[0]?.event;
    // The object written from the body holds that very event.
    const stored = gunzipSync(await auditRecord(events, verdicts, batch, body, conversions).encode()).toString('utf8');
    expect(JSON.stringify((JSON.parse(stored) as { event: unknown }).event)).toBe(JSON.stringify(expected));
    expect(verdicts[0]?.status).toBe('accepted');
    expect(JSON.stringify(event)).toBe(JSON.stringify(expected));
    expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
    expect(Object.keys(event as object)).toEqual(Object.keys(expected));
  });

  it('copies a converted event from the body with its revenue_usd after it, byte for byte as JSON.stringify writes the line', async () => {
    const member = fc.record(
      {
        ad: fc.boolean(),
        currency: fc.constantFrom('USD', 'EUR', 'JPY'),
        amount: fc.oneof(fc.double({ min: 0, max: 1e4, noNaN: true }), fc.integer({ min: 0, max: 1e4 })),
        device: fc.constantFrom(undefined, 'dev-1', 'dev-2'),
        nullUsd: fc.boolean(),
      },
      { requiredKeys: ['ad', 'currency', 'amount', 'nullUsd'] },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(member, { minLength: 1, maxLength: 12 }), async (members) => {
        const sent = members.map(({ ad, currency, amount, device, nullUsd }, i) => {
          const { revenue_usd: _none, ...event } = validEvent({ event_id: `e-${i}` }, NOW - 1000);
          const priced: Record<string, unknown> = ad
            ? {
                ...event,
                event_name: 'ad_revenue',
                ad_revenue: {
                  source: 'admob',
                  network: 'AdMob',
                  format: 'banner',
                  revenue: amount / 1e5,
                  currency,
                  precision: 'exact',
                  impression_id: `imp-${i}`,
                },
              }
            : { ...event, revenue: amount, currency };
          if (nullUsd) priced.revenue_usd = null;
          if (device !== undefined) priced.device_id = device;
          return priced;
        });
        // As the handler has them: parsed from the body, so the lines can copy each event from it.
        const body = Buffer.from(JSON.stringify({ events: sent, sent_at_ms: NOW }));
        const events = (JSON.parse(body.toString('utf8')) as { events: unknown[] }).events;
        const { verdicts, conversions } = await take(events);
        const lines = auditLines(events, verdicts, batch, conversions);
        const copied = gunzipSync(
          await auditRecord(events, verdicts, batch, eventTexts(body, events.length), conversions).encode(),
        ).toString('utf8');
        expect(copied).toBe(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
        for (const [i, line] of lines.entries()) {
          const conversion = conversions.get(i);
          if (conversion !== undefined) expect(line.event).toMatchObject({ revenue_usd: conversion.revenueUsd });
        }
      }),
      { numRuns: 200 },
    );
  });
});
