import fc from 'fast-check';
import {
  COST_ERRORS,
  type CostDay,
  type CostDays,
  CostUploadError,
  checkCostRow,
  MAX_COST,
  MAX_COST_DAY_BYTES,
  MAX_COST_DAY_SUM,
  MAX_COST_ROWS,
  type PartnerCost,
  rowsOfBody,
  uploadCost,
} from '../../../functions/domain/analytics/cost';
import { type CostRow, dimsKey, NONE } from '../../../functions/domain/analytics/performance';
import type { FxRateStore, FxTable, UsdRates } from '../../../functions/domain/fx/rates';

const APP = 'app_a';

/** The cost rows of the aggregates table in memory, with DynamoDB's conditions; `before` runs ahead of each replace (to race it). */
class MemoryCostDays implements CostDays {
  readonly days = new Map<string, CostDay>();
  readonly partners = new Map<string, PartnerCost & { ver: number }>();
  readonly stamps = new Map<string, number>();
  replaces = 0;
  conflicts = 0;
  before?: () => Promise<void>;

  async readDay(appId: string, day: string): Promise<CostDay> {
    return this.days.get(`${appId}|${day}`) ?? { rows: [], ver: 0 };
  }

  async replaceDay(appId: string, day: string, rows: readonly CostRow[], ver: number): Promise<boolean> {
    const hook = this.before;
    this.before = undefined;
    await hook?.();
    const key = `${appId}|${day}`;
    if ((this.days.get(key)?.ver ?? 0) !== ver - 1) {
      this.conflicts++;
      return false;
    }
    this.replaces++;
    this.days.set(key, { rows: [...rows], ver });
    return true;
  }

  async putPartnerCosts(appId: string, day: string, ver: number, sums: readonly PartnerCost[]): Promise<void> {
    // As DynamoDB's SDK does: a number it cannot hold exactly is refused, and nothing is written.
    if (sums.some((sum) => Object.values(sum.counters).some((n) => !Number.isSafeInteger(n))))
      throw new Error('Number is greater than Number.MAX_SAFE_INTEGER');
    for (const sum of sums) {
      const key = `${appId}|${day}|${sum.partner}`;
      const stored = this.partners.get(key);
      if (stored === undefined || stored.ver < ver) this.partners.set(key, { ...sum, ver });
    }
  }

  async touchDay(appId: string, day: string): Promise<void> {
    const key = `${appId}|${day}`;
    this.stamps.set(key, (this.stamps.get(key) ?? 0) + 1);
  }
}

class MemoryRates implements FxRateStore {
  readonly table = new Map<string, UsdRates>();
  async ratesOf(days: readonly string[]): Promise<FxTable> {
    return new Map(days.flatMap((day) => (this.table.has(day) ? [[day, this.table.get(day) as UsdRates] as const] : [])));
  }
}

function world() {
  const days = new MemoryCostDays();
  const rates = new MemoryRates();
  return { days, rates, upload: (rows: unknown[]) => uploadCost({ days, rates }, APP, rows) };
}

const good = {
  date: '2026-03-01',
  partner: 'meta',
  campaign: 'spring',
  country: 'US',
  platform: 'ios',
  cost: 12.5,
  currency: 'USD',
  clicks: 3,
  impressions: 400,
};

/** The refusal of an upload, as its body says it. */
async function refusal(upload: Promise<unknown>) {
  try {
    await upload;
  } catch (error) {
    if (error instanceof CostUploadError) return { status: error.statusCode, ...error.body() };
    throw error;
  }
  throw new Error('the upload was taken');
}

describe('a cost row', () => {
  it('takes the example of the interface, and fills what is missing with (none), USD and 0', () => {
    expect(checkCostRow(good)).toEqual({
      row: { date: '2026-03-01', dims: ['meta', 'spring', 'US', 'ios'], cost: 12.5, currency: 'USD', network_clicks: 3, impressions: 400 },
    });
    expect(checkCostRow({ date: '2026-03-01', partner: 'meta', cost: 0, campaign: '', country: null })).toEqual({
      row: { date: '2026-03-01', dims: ['meta', NONE, NONE, NONE], cost: 0, currency: 'USD', network_clicks: 0, impressions: 0 },
    });
  });

  it('takes the first and last days of the accepted range, 2000-01-01 and 2099-12-31', () => {
    for (const date of ['2000-01-01', '2099-12-31']) expect(checkCostRow({ ...good, date })).toMatchObject({ row: { date } });
  });

  it('upper-cases the country and lower-cases the platform', () => {
    expect(checkCostRow({ ...good, country: 'de', platform: 'Android' })).toMatchObject({
      row: { dims: ['meta', 'spring', 'DE', 'android'] },
    });
  });

  const BAD: [string, Record<string, unknown>, string | undefined][] = [
    ['a missing date', { date: undefined }, 'date'],
    ['a date that is no calendar day', { date: '2026-02-30' }, 'date'],
    ['a date with a time', { date: '2026-03-01T00:00:00Z' }, 'date'],
    // Days past 2099 are refused: 9999-12-27..31 made weeks ending in "+010000-01" (issue 36).
    ['a date in the last week of 9999', { date: '9999-12-27' }, 'date'],
    ['the last day a key can name', { date: '9999-12-31' }, 'date'],
    ['the first day a key can name', { date: '0000-01-01' }, 'date'],
    ['the day before 2000-01-01', { date: '1999-12-31' }, 'date'],
    ['the day after 2099-12-31', { date: '2100-01-01' }, 'date'],
    ['a missing partner', { partner: undefined }, 'partner'],
    ['an empty partner', { partner: '  ' }, 'partner'],
    ['a partner that is no text', { partner: 7 }, 'partner'],
    ['a partner of 101 characters', { partner: 'p'.repeat(101) }, 'partner'],
    ['a campaign with a control character', { campaign: 'a\u0001b' }, 'campaign'],
    ['a campaign that is no text', { campaign: 3 }, 'campaign'],
    ['a country that is no ISO code', { country: 'XX' }, 'country'],
    ['a three-letter country', { country: 'USA' }, 'country'],
    ['an unknown platform', { platform: 'web' }, 'platform'],
    ['a missing cost', { cost: undefined }, 'cost'],
    ['a negative cost', { cost: -0.01 }, 'cost'],
    ['a cost as text', { cost: '12.5' }, 'cost'],
    ['an infinite cost', { cost: Number.POSITIVE_INFINITY }, 'cost'],
    ['a cost over a billion', { cost: 1e9 + 1 }, 'cost'],
    ['an unknown currency', { currency: 'XYZ' }, 'currency'],
    ['a lower-case currency', { currency: 'usd' }, 'currency'],
    ['fractional clicks', { clicks: 1.5 }, 'clicks'],
    ['negative impressions', { impressions: -1 }, 'impressions'],
    ['an unknown member', { cots: 1 }, undefined],
  ];

  it.each(BAD)('is refused with bad_cost_row at its index for %s', async (_name, change, field) => {
    const { upload, days } = world();
    const bad = { ...good, ...change };
    const answer = await refusal(upload([good, good, bad, { ...good, cost: -1 }]));
    expect(answer).toMatchObject({ status: 400, error: 'bad_cost_row', index: 2, message: expect.any(String) });
    expect((answer as { field?: string }).field).toBe(field);
    expect(days.days.size).toBe(0);
  });

  it('is refused, not an object, without a field', async () => {
    expect(await refusal(world().upload([good, 'meta']))).toEqual({
      status: 400,
      error: 'bad_cost_row',
      index: 1,
      message: 'a row must be a JSON object',
    });
  });

  it('in another currency is converted at the rate of its day, else of the latest day before within 7', async () => {
    const { upload, rates, days } = world();
    rates.table.set('2026-02-25', { EUR: 1.1 });
    rates.table.set('2026-03-01', { EUR: 1.08 });
    await upload([
      { ...good, cost: 100, currency: 'EUR' },
      { ...good, date: '2026-02-28', cost: 100, currency: 'EUR' },
    ]);
    expect((await days.readDay(APP, '2026-03-01')).rows[0]).toMatchObject({ cost_micros: 108_000_000, currency: 'EUR', cost: 100 });
    expect((await days.readDay(APP, '2026-02-28')).rows[0]).toMatchObject({ cost_micros: 110_000_000 });
  });

  it('in a currency without a rate is refused, naming the currency, at the first such row (unless a misshapen row comes first)', async () => {
    const { upload, rates } = world();
    rates.table.set('2026-02-20', { EUR: 1.1 });
    // 2026-03-01 is 9 days after the only rate: too old.
    expect(await refusal(upload([good, { ...good, currency: 'EUR' }, { ...good, cost: -1 }]))).toMatchObject({
      error: 'bad_cost_row',
      index: 1,
      field: 'currency',
    });
    expect(await refusal(upload([good, { ...good, cost: -1 }, { ...good, currency: 'EUR' }]))).toMatchObject({ index: 1, field: 'cost' });
  });
});

describe('the body', () => {
  it('must be an object with 1 to 1,000 rows (bad_batch_shape, naming rows)', () => {
    const shape = (body: unknown) => {
      try {
        rowsOfBody(body);
      } catch (error) {
        return (error as CostUploadError).body();
      }
      return 'taken';
    };
    expect(shape([good])).toMatchObject({ error: 'bad_batch_shape' });
    expect(shape({})).toMatchObject({ error: 'bad_batch_shape', field: 'rows' });
    expect(shape({ rows: [] })).toMatchObject({ error: 'bad_batch_shape', field: 'rows' });
    expect(shape({ rows: {} })).toMatchObject({ error: 'bad_batch_shape', field: 'rows' });
    expect(shape({ rows: Array(MAX_COST_ROWS + 1).fill(good) })).toMatchObject({ error: 'bad_batch_shape', field: 'rows' });
    expect(shape({ rows: Array(MAX_COST_ROWS).fill(good) })).toBe('taken');
    expect(COST_ERRORS.bad_batch_shape).toBe(400);
  });
});

// ---- Replacing: any sequence of uploads is a map keyed by identity, the last write winning ----

const PARTNERS = ['meta', 'google', 'tiktok'];
const arbitraryRow = fc.record({
  date: fc.constantFrom('2026-03-01', '2026-03-02', '2026-03-03'),
  partner: fc.constantFrom(...PARTNERS),
  campaign: fc.constantFrom('spring', 'summer', '', undefined),
  country: fc.constantFrom('US', 'de', undefined),
  platform: fc.constantFrom('ios', 'android', undefined),
  cost: fc.integer({ min: 0, max: 10_000_000 }).map((cents) => cents / 100),
  clicks: fc.option(fc.nat({ max: 1_000_000 }), { nil: undefined }),
  impressions: fc.option(fc.nat({ max: 1_000_000 }), { nil: undefined }),
});
const uploads = fc.array(fc.array(arbitraryRow, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 });

/** The oracle: every row ever sent, by (date, partner, campaign, country, platform), the last one kept. */
function oracleOf(sent: readonly (typeof arbitraryRow extends fc.Arbitrary<infer R> ? R : never)[][]) {
  const rows = new Map<string, { date: string; partner: string; cost_micros: number; clicks: number; impressions: number }>();
  for (const upload of sent)
    for (const row of upload) {
      const identity = [row.date, row.partner, row.campaign || NONE, row.country?.toUpperCase() ?? NONE, row.platform ?? NONE].join('|');
      rows.set(identity, {
        date: row.date,
        partner: row.partner,
        cost_micros: Math.round(row.cost * 1e6),
        clicks: row.clicks ?? 0,
        impressions: row.impressions ?? 0,
      });
    }
  return rows;
}

describe('uploading cost', () => {
  it('keeps, for any sequence of uploads, one row per identity, the last sent, and partner sums equal to the oracle', async () => {
    await fc.assert(
      fc.asyncProperty(uploads, async (sent) => {
        const { upload, days } = world();
        for (const rows of sent) expect(await upload(rows)).toEqual({ accepted: rows.length });
        const oracle = oracleOf(sent);
        const stored = new Map<string, { date: string; partner: string; cost_micros: number; clicks: number; impressions: number }>();
        for (const [key, day] of days.days)
          for (const row of day.rows) {
            const date = key.split('|')[1] as string;
            const identity = [date, ...row.dims].join('|');
            expect(stored.has(identity)).toBe(false);
            stored.set(identity, {
              date,
              partner: row.dims[0],
              cost_micros: row.cost_micros,
              clicks: row.network_clicks,
              impressions: row.impressions,
            });
          }
        expect(stored).toEqual(oracle);

        const sums = new Map<string, { cost_micros: number; network_clicks: number; impressions: number }>();
        for (const row of oracle.values()) {
          const key = `${APP}|${row.date}|${row.partner}`;
          const sum = sums.get(key) ?? { cost_micros: 0, network_clicks: 0, impressions: 0 };
          sums.set(key, {
            cost_micros: sum.cost_micros + row.cost_micros,
            network_clicks: sum.network_clicks + row.clicks,
            impressions: sum.impressions + row.impressions,
          });
        }
        expect(new Map([...days.partners].map(([key, partner]) => [key, partner.counters]))).toEqual(sums);
        // Each partner's sums are of its day's latest version.
        for (const [key, partner] of days.partners) expect(partner.ver).toBe(days.days.get(key.split('|').slice(0, 2).join('|'))?.ver);
      }),
      { numRuns: 150 },
    );
  });

  it('counts a row sent twice once, and does not replace a day for a resend that changes nothing (but stamps the day again)', async () => {
    const { upload, days } = world();
    await upload([good]);
    await upload([good]);
    expect((await days.readDay(APP, good.date)).rows).toHaveLength(1);
    expect(days.replaces).toBe(1);
    expect(days.stamps.get(`${APP}|${good.date}`)).toBe(2);
    expect(days.partners.get(`${APP}|${good.date}|meta`)?.counters).toEqual({
      cost_micros: 12_500_000,
      network_clicks: 3,
      impressions: 400,
    });
  });

  it('keeps the last of two rows of one identity in one request', async () => {
    const { upload, days } = world();
    await upload([good, { ...good, cost: 1 }]);
    expect((await days.readDay(APP, good.date)).rows.map((row) => row.cost_micros)).toEqual([1_000_000]);
  });

  it("loses neither upload's rows when another upload replaces the day between its read and its write", async () => {
    const { upload, days } = world();
    days.before = async () => {
      await upload([{ ...good, partner: 'google' }]);
    };
    await upload([good]);
    expect(days.conflicts).toBe(1);
    expect((await days.readDay(APP, good.date)).rows.map((row) => dimsKey(row.dims)).sort()).toEqual(
      [dimsKey(['google', 'spring', 'US', 'ios']), dimsKey(['meta', 'spring', 'US', 'ios'])].sort(),
    );
    expect([...days.partners.keys()].sort()).toEqual([`${APP}|${good.date}|google`, `${APP}|${good.date}|meta`]);
    expect(days.partners.get(`${APP}|${good.date}|google`)?.ver).toBe(2);
  });

  it('gives up (a store error, 503 at the edge) when the day keeps changing under it', async () => {
    const { upload, days } = world();
    const race =
      (n: number): (() => Promise<void>) =>
      async () => {
        await days.touchDay(APP, 'x');
        const stored = await days.readDay(APP, good.date);
        days.days.set(`${APP}|${good.date}`, { rows: stored.rows, ver: stored.ver + 1 });
        if (n > 0) days.before = race(n - 1);
      };
    days.before = race(20);
    await expect(upload([good])).rejects.toThrow(/kept changing/);
  });

  it('refuses the rows that would take a day past its size, naming the first, and stores nothing of the request', async () => {
    const { upload, days } = world();
    const row = (i: number) => ({ ...good, campaign: `campaign-${String(i).padStart(80, '0')}` });
    const perRow = JSON.stringify(['meta', row(0).campaign, 'US', 'ios', 12500000, 3, 400, 'USD', 12.5]).length + 1;
    const fitting = Math.floor(MAX_COST_DAY_BYTES / perRow);
    for (let from = 0; from < fitting; from += MAX_COST_ROWS)
      await upload(Array.from({ length: Math.min(MAX_COST_ROWS, fitting - from) }, (_, i) => row(from + i)));
    const before = await days.readDay(APP, good.date);
    expect(before.rows).toHaveLength(fitting);
    const answer = await refusal(upload([{ ...good, date: '2026-03-02' }, row(0), row(fitting), row(fitting + 1)]));
    expect(answer).toMatchObject({ status: 400, error: 'cost_day_full', index: 2 });
    expect(await days.readDay(APP, good.date)).toEqual(before);
    expect((await days.readDay(APP, '2026-03-02')).ver).toBe(0);
    // Replacing rows the day already holds still fits.
    await upload([row(0), row(1)]);
  });

  it('refuses a day whose cost would add up past its bound (10 rows of 1e9 for one partner), naming the row, and stores nothing', async () => {
    const { upload, days } = world();
    const rows = Array.from({ length: 10 }, (_, i) => ({ ...good, campaign: `c${i}`, cost: MAX_COST }));
    // $20,000,000 is 20 rows of $1,000,000: the 21st passes the bound.
    expect(await refusal(upload(rows))).toMatchObject({ status: 400, error: 'cost_day_too_large', index: 0, field: 'cost' });
    const million = Array.from({ length: 21 }, (_, i) => ({ ...good, campaign: `c${i}`, cost: 1_000_000 }));
    expect(await refusal(upload(million))).toMatchObject({ status: 400, error: 'cost_day_too_large', index: 20, field: 'cost' });
    expect(await refusal(upload([good, { ...good, campaign: 'x', clicks: MAX_COST_DAY_SUM }]))).toMatchObject({
      error: 'cost_day_too_large',
      index: 1,
      field: 'clicks',
    });
    expect(days.days.size).toBe(0);
    expect(days.partners.size).toBe(0);
    // Up to the bound is taken, and a row replaced by a smaller one makes room again.
    await upload(million.slice(0, 20));
    await upload([{ ...million[0], cost: 0 }, million[20]]);
    expect(days.partners.get(`${APP}|${good.date}|meta`)?.counters.cost_micros).toBe(MAX_COST_DAY_SUM);
  });

  it("keeps a day's totals by partner equal to its totals by campaign under any upload, taken or refused", async () => {
    const amount = fc.oneof(fc.constantFrom(0, 1, MAX_COST, MAX_COST_DAY_SUM / 1e6), fc.integer({ min: 0, max: MAX_COST }));
    const count = fc.oneof(fc.constantFrom(0, MAX_COST_DAY_SUM, Number.MAX_SAFE_INTEGER), fc.nat());
    const row = fc.record({
      date: fc.constantFrom('2026-03-01', '2026-03-02'),
      partner: fc.constantFrom('meta', 'google'),
      campaign: fc.constantFrom('a', 'b', 'c'),
      cost: amount,
      clicks: count,
      impressions: count,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(row, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 6 }), async (sent) => {
        const { upload, days } = world();
        for (const rows of sent) {
          const answer = await upload(rows).then(
            () => 'taken',
            (error: unknown) => (error instanceof CostUploadError ? error.code : String(error)),
          );
          expect(['taken', 'cost_day_too_large']).toContain(answer);
        }
        for (const [key, day] of days.days) {
          const byCampaign = { cost_micros: 0, network_clicks: 0, impressions: 0 };
          for (const stored of day.rows)
            for (const counter of ['cost_micros', 'network_clicks', 'impressions'] as const) byCampaign[counter] += stored[counter];
          const byPartner = { cost_micros: 0, network_clicks: 0, impressions: 0 };
          for (const [partnerKey, partner] of days.partners)
            if (partnerKey.startsWith(`${key}|`))
              for (const counter of ['cost_micros', 'network_clicks', 'impressions'] as const)
                byPartner[counter] += partner.counters[counter];
          expect(byPartner).toEqual(byCampaign);
          for (const total of Object.values(byCampaign)) expect(total).toBeLessThanOrEqual(MAX_COST_DAY_SUM);
        }
      }),
      { numRuns: 200 },
    );
  });
});
