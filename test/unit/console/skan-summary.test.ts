import fc from 'fast-check';
import { postbacksPerDay, SKAN_COUNTS, skanByPartnerAndWindow } from '../../../console/ui/skan-summary';

const DAYS = ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04'];

/** A SKAN report row as GET /api/v1/reports/skan answers it (docs/ios.md section 3). */
const row = fc.record({
  day: fc.constantFrom(...DAYS),
  partner: fc.constantFrom('meta', 'google', 'example123.skadnetwork', 'Ünïcode'),
  source_identifier: fc.constantFrom('1', '2'),
  postback_sequence_index: fc.integer({ min: 0, max: 2 }),
  fidelity_type: fc.integer({ min: 0, max: 1 }),
  conversion_type: fc.constantFrom('download', 'redownload'),
  postbacks: fc.nat(50),
  installs: fc.nat(50),
  redownloads: fc.nat(50),
  with_fine_value: fc.nat(50),
  with_coarse_value: fc.nat(50),
  without_value: fc.nat(50),
  // Cents, as the report rounds them.
  estimated_revenue_usd: fc.nat(1_000_000).map((cents) => cents / 100),
});

describe("the SKAN page's sums", () => {
  it('sum each counter and the revenue by partner and window, and in total, to the cent, against a sum of each group on its own', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 60 }), (rows) => {
        const { groups, total } = skanByPartnerAndWindow(rows);
        const keys = [...new Set(rows.map((r) => `${r.partner}|${r.postback_sequence_index}`))].sort();
        expect(groups.map((g) => `${g.partner}|${g.window}`).sort()).toEqual(keys);
        for (const group of groups) {
          const mine = rows.filter((r) => r.partner === group.partner && r.postback_sequence_index === group.window);
          for (const name of SKAN_COUNTS) expect(group[name]).toBe(mine.reduce((sum, r) => sum + r[name], 0));
          const cents = mine.reduce((sum, r) => sum + Math.round(r.estimated_revenue_usd * 100), 0);
          expect(group.estimated_revenue_usd.toFixed(2)).toBe((cents / 100).toFixed(2));
        }
        for (const name of SKAN_COUNTS) expect(total[name]).toBe(rows.reduce((sum, r) => sum + r[name], 0));
        const allCents = rows.reduce((sum, r) => sum + Math.round(r.estimated_revenue_usd * 100), 0);
        expect(Math.round(total.estimated_revenue_usd * 100)).toBe(allCents);
        // Partner first, then window: the order a marketer reads a partner's windows in.
        const order = groups.map((g) => [g.partner, g.window ?? 0] as const);
        for (let i = 1; i < order.length; i += 1) {
          const [a, b] = [order[i - 1], order[i]];
          if (a && b) expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])).toBe(true);
        }
      }),
    );
  });

  it('give every day of the period a value per partner, 0 on a day without postbacks', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 60 }), (rows) => {
        const { partners, values } = postbacksPerDay(rows, DAYS);
        expect(partners).toEqual([...new Set(rows.map((r) => r.partner))].sort());
        for (const partner of partners) {
          const series = values(partner);
          expect(series).toHaveLength(DAYS.length);
          for (const [i, day] of DAYS.entries()) {
            const sent = rows.filter((r) => r.partner === partner && r.day === day);
            expect(series[i]).toBe(sent.reduce((sum, r) => sum + r.postbacks, 0));
          }
        }
      }),
    );
  });
});
