import fc from 'fast-check';
import type { AttemptRecord } from '../../../functions/domain/partner-postbacks/deliver';
import { CONSENT_REASON_PREFIX, withheldForConsent } from '../../../functions/domain/partner-postbacks/withheld';
import { sharingVerdict } from '../../../functions/domain/privacy/consent';

const T = Date.UTC(2026, 10, 28, 12);
const HOUR = 3_600_000;

const attempt = (over: Partial<AttemptRecord>): AttemptRecord => ({
  app_id: 'app_1',
  postback_id: 'pb',
  partner: 'meta',
  kind: 'install',
  event_name: 'install',
  attempt: 0,
  at_ms: T,
  outcome: 'withheld',
  ...over,
});

const REASONS = ['consent: measurement withdrawn', 'consent: no TCF consent for vendor 755', 'consent: third_party_sharing refused'];

describe('postbacks withheld for consent', () => {
  it("recognises sharingVerdict's reasons by their prefix", () => {
    for (const verdict of [
      sharingVerdict({ measurement: false }, undefined),
      sharingVerdict({ third_party_sharing: false }, undefined),
      sharingVerdict({ gdpr_applies: true }, 755),
    ]) {
      expect(verdict.share).toBe(false);
      if (!verdict.share) expect(verdict.reason.startsWith(CONSENT_REASON_PREFIX)).toBe(true);
    }
  });

  it('counts per partner and reason what was withheld for consent in the period, and lists the newest first', () => {
    const arb = fc.array(
      fc.record({
        partner: fc.constantFrom('meta', 'gads', 'tiktok'),
        at_ms: fc.integer({ min: T - 10 * HOUR, max: T + 10 * HOUR }),
        outcome: fc.constantFrom('withheld', 'withheld', 'delivered', 'failed') as fc.Arbitrary<AttemptRecord['outcome']>,
        error: fc.option(fc.constantFrom(...REASONS, 'ctit_under_10s', 'HTTP 500'), { nil: undefined }),
        postback_id: fc.stringMatching(/^[0-9a-f]{4}$/),
        kind: fc.constantFrom('install', 'event') as fc.Arbitrary<AttemptRecord['kind']>,
      }),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(
        arb,
        fc.option(fc.constantFrom('meta', 'gads'), { nil: undefined }),
        fc.integer({ min: 1, max: 20 }),
        (rows, partner, limit) => {
          const attempts = rows.map((row) => attempt({ ...row, event_name: row.kind === 'install' ? 'install' : 'purchase' }));
          const period = { sinceMs: T - 5 * HOUR, untilMs: T + 5 * HOUR, partner, limit };
          const summary = withheldForConsent(attempts, period);
          // The oracle: a plain filter and tallies.
          const kept = attempts.filter(
            (a) =>
              a.outcome === 'withheld' &&
              REASONS.includes(a.error ?? '') &&
              a.at_ms >= period.sinceMs &&
              a.at_ms < period.untilMs &&
              (partner === undefined || a.partner === partner),
          );
          expect(summary.withheld).toBe(kept.length);
          const tally: Record<string, Record<string, number>> = {};
          for (const a of kept) {
            const reasons = tally[a.partner] ?? {};
            reasons[a.error ?? ''] = (reasons[a.error ?? ''] ?? 0) + 1;
            tally[a.partner] = reasons;
          }
          expect(
            Object.fromEntries(summary.partners.map((p) => [p.partner, Object.fromEntries(p.reasons.map((r) => [r.reason, r.withheld]))])),
          ).toEqual(tally);
          for (const p of summary.partners) expect(p.withheld).toBe(Object.values(tally[p.partner] ?? {}).reduce((s, n) => s + n, 0));
          const counts = summary.partners.map((p) => p.withheld);
          expect(counts).toEqual([...counts].sort((a, b) => b - a));
          expect(summary.postbacks).toHaveLength(Math.min(limit, kept.length));
          expect(summary.truncated).toBe(kept.length > limit);
          const times = summary.postbacks.map((p) => p.at_ms);
          expect(times).toEqual([...times].sort((a, b) => b - a));
          expect(times[0]).toBe(kept.length ? Math.max(...kept.map((a) => a.at_ms)) : undefined);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves out a postback withheld for fraud, and names the reason of each it lists', () => {
    const summary = withheldForConsent(
      [
        attempt({ error: 'ctit_under_10s', postback_id: 'a' }),
        attempt({ error: 'consent: measurement withdrawn', postback_id: 'b', partner: 'gads', kind: 'event', event_name: 'purchase' }),
      ],
      { sinceMs: T - HOUR, untilMs: T + HOUR, limit: 10 },
    );
    expect(summary).toEqual({
      since_ms: T - HOUR,
      until_ms: T + HOUR,
      withheld: 1,
      partners: [{ partner: 'gads', withheld: 1, reasons: [{ reason: 'consent: measurement withdrawn', withheld: 1 }] }],
      postbacks: [
        { at_ms: T, partner: 'gads', kind: 'event', event_name: 'purchase', postback_id: 'b', reason: 'consent: measurement withdrawn' },
      ],
      truncated: false,
    });
  });
});
