import fc from 'fast-check';
import { CachedFxRates } from '../../../functions/adapters/fx-store';
import { MemoryFxRates } from '../../../functions/adapters/memory/fx-rates';
import { usdRatesOfEcb } from '../../../functions/domain/fx/ecb';
import {
  convertToUsd,
  FX_LOOKBACK_DAYS,
  type FxTable,
  isCurrencyCode,
  readRatesFor,
  type UsdRates,
} from '../../../functions/domain/fx/rates';
import { FxRatesFileError, parseRatesFile } from '../../../functions/domain/fx/rates-file';

const DAY_MS = 86_400_000;
const BASE = Date.UTC(2025, 0, 1);
/** Day n after 2025-01-01, by its own arithmetic (the oracle's, not rates.ts'). */
const dayN = (n: number) => new Date(BASE + n * DAY_MS).toISOString().slice(0, 10);

describe('convertToUsd', () => {
  it('uses the rate of the day itself when there is one', () => {
    const rates: FxTable = new Map([
      ['2025-03-10', { EUR: 1.08 }],
      ['2025-03-09', { EUR: 1.5 }],
    ]);
    expect(convertToUsd(rates, 10, 'EUR', '2025-03-10')).toEqual({ usd: 10.8, rate: 1.08, rate_day: '2025-03-10' });
  });

  it('bridges a weekend with the latest earlier rate, and never uses one older than 7 days or a later one', () => {
    const rates: FxTable = new Map([
      ['2025-03-01', { JPY: 0.0066 }],
      ['2025-03-12', { JPY: 0.007 }],
    ]);
    expect(convertToUsd(rates, 1000, 'JPY', '2025-03-08')).toEqual({ usd: 6.6, rate: 0.0066, rate_day: '2025-03-01' });
    expect(convertToUsd(rates, 1000, 'JPY', '2025-03-09')).toBeUndefined();
    expect(convertToUsd(rates, 1000, 'JPY', '2025-02-28')).toBeUndefined();
  });

  it('takes USD as 1 without a rate, and refuses codes that are not ISO 4217', () => {
    expect(convertToUsd(new Map(), 4.99, 'USD', '2025-03-10')).toEqual({ usd: 4.99, rate: 1, rate_day: '2025-03-10' });
    for (const code of ['eur', 'XYZ', 'EURO', '', 'XAU'])
      expect(convertToUsd(new Map([['2025-03-10', { [code]: 1 }]]), 1, code, '2025-03-10')).toBeUndefined();
    expect(isCurrencyCode('EUR') && isCurrencyCode('JPY') && isCurrencyCode('BRL')).toBe(true);
  });

  it('rounds to the micro-dollar', () => {
    expect(convertToUsd(new Map([['2025-03-10', { EUR: 1.0812345678 }]]), 3, 'EUR', '2025-03-10')?.usd).toBe(3.243704);
  });

  it('uses the latest rate of the day or the 7 days before it, none older and none later (property)', () => {
    fc.assert(
      fc.property(
        // Days with a EUR rate (as offsets from 2025-01-01, a month around a leap-free February) and the converted day.
        fc.dictionary(fc.integer({ min: 0, max: 40 }).map(String), fc.double({ min: 0.001, max: 1000, noNaN: true }), { maxKeys: 12 }),
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        (offsets, target, amount) => {
          const rates = new Map<string, UsdRates>(Object.entries(offsets).map(([n, rate]) => [dayN(Number(n)), { EUR: rate }]));
          // The oracle: scan the offsets themselves for the greatest within [target - 7, target].
          const usable = Object.keys(offsets)
            .map(Number)
            .filter((n) => n <= target && n >= target - FX_LOOKBACK_DAYS);
          const conversion = convertToUsd(rates, amount, 'EUR', dayN(target));
          if (usable.length === 0) {
            expect(conversion).toBeUndefined();
            return;
          }
          const chosen = Math.max(...usable);
          const rate = offsets[String(chosen)] as number;
          expect(conversion).toEqual({ usd: Math.round(amount * rate * 1e6) / 1e6, rate, rate_day: dayN(chosen) });
        },
      ),
    );
  });

  it('reads the 8-day windows of the days asked for in one read', async () => {
    const store = new MemoryFxRates({ '2025-03-03': { EUR: 1.1 } });
    const table = await readRatesFor(store, ['2025-03-10', '2025-03-10', '2025-03-11']);
    expect(store.reads).toEqual([
      ['2025-03-03', '2025-03-04', '2025-03-05', '2025-03-06', '2025-03-07', '2025-03-08', '2025-03-09', '2025-03-10', '2025-03-11'],
    ]);
    expect(convertToUsd(table, 1, 'EUR', '2025-03-10')?.rate_day).toBe('2025-03-03');
  });
});

describe('the instance cache of the rates', () => {
  it('reads a day once while it is fresh, a day without rates again after the miss period, and only the days not cached', async () => {
    let now = 0;
    const store = new MemoryFxRates({ '2025-03-10': { EUR: 1.08 } });
    const cached = new CachedFxRates(store, 300_000, 30_000, () => now);
    expect((await cached.ratesOf(['2025-03-09', '2025-03-10'])).get('2025-03-10')).toEqual({ EUR: 1.08 });
    await cached.ratesOf(['2025-03-09', '2025-03-10']);
    expect(store.reads).toHaveLength(1);
    store.days.set('2025-03-09', { EUR: 1.07 });
    now = 30_001;
    expect((await cached.ratesOf(['2025-03-09', '2025-03-10'])).get('2025-03-09')).toEqual({ EUR: 1.07 });
    expect(store.reads[1]).toEqual(['2025-03-09']);
  });

  it('passes a failing store on, caching nothing', async () => {
    const store = new MemoryFxRates();
    store.failing = new Error('down');
    const cached = new CachedFxRates(store);
    await expect(cached.ratesOf(['2025-03-10'])).rejects.toThrow('down');
    store.failing = undefined;
    await cached.ratesOf(['2025-03-10']);
    expect(store.reads).toHaveLength(2);
  });
});

describe('the ECB reference rates', () => {
  const ecb = (day: string, cubes: string) => `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
  <gesmes:subject>Reference rates</gesmes:subject>
  <gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
  <Cube>
    <Cube time='${day}'>
${cubes}
    </Cube>
  </Cube>
</gesmes:Envelope>`;

  it('turns rates per euro into US dollars per unit: EUR = r(USD), C = r(USD) / r(C)', () => {
    const xml = ecb(
      '2025-03-10',
      "<Cube currency='USD' rate='1.0800'/><Cube currency='JPY' rate='160.00'/><Cube currency='GBP' rate='0.8400'/>",
    );
    const [day] = usdRatesOfEcb(xml);
    expect(day?.day).toBe('2025-03-10');
    expect(day?.rates).toEqual({ EUR: 1.08, USD: 1, JPY: 0.00675, GBP: Number((1.08 / 0.84).toPrecision(10)) });
  });

  it('refuses a document without a USD rate or without days, and one that is not XML', () => {
    expect(() => usdRatesOfEcb(ecb('2025-03-10', "<Cube currency='JPY' rate='160.00'/>"))).toThrow(/no USD rate/);
    expect(() => usdRatesOfEcb('<html><body>maintenance</body></html>')).toThrow(/no Cube/);
    expect(() => usdRatesOfEcb(ecb('yesterday', "<Cube currency='USD' rate='1.08'/>"))).toThrow(/YYYY-MM-DD/);
  });
});

describe('the rates file of admin fx set', () => {
  it('takes codes to US dollars per unit', () => {
    expect(parseRatesFile('{"EUR": 1.08, "JPY": 0.0066}')).toEqual({ EUR: 1.08, JPY: 0.0066 });
    expect(parseRatesFile('{"KWD": 1000000, "IRR": 1e-12}')).toEqual({ KWD: 1e6, IRR: 1e-12 });
  });

  it.each([
    ['{"eur": 1.08}', /^eur: not an ISO 4217/],
    ['{"EUR": 1.08, "XYZ": 2}', /^XYZ: not an ISO 4217/],
    ['{"JPY": 0}', /^JPY: the rate must be a number from 1e-12 to 1000000/],
    ['{"JPY": "0.0066"}', /^JPY: the rate must be a number from 1e-12 to 1000000/],
    // Issue 36: DynamoDB's SDK refuses a number above 2^53, DynamoDB one below 1e-130.
    ['{"EUR": 9007199254740993}', /^EUR: the rate must be a number from 1e-12 to 1000000 \(US dollars per unit\), not 9007199254740992$/],
    ['{"EUR": 1000000.5}', /^EUR: the rate must be a number from/],
    ['{"EUR": 1e-131}', /^EUR: the rate must be a number from/],
    ['{"USD": 1.1}', /^USD: /],
    ['{}', /names no currency/],
    ['[1]', /JSON object/],
    ['{"EUR": 1.08', /not JSON/],
  ])('refuses %s, naming the code at fault', (text, message) => {
    expect(() => parseRatesFile(text)).toThrow(FxRatesFileError);
    expect(() => parseRatesFile(text)).toThrow(message);
  });
});
