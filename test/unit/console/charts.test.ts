import fc from 'fast-check';
import { maturityOf } from '../../../functions/domain/analytics/performance-report';

/*
 * charts.ts is browser code (Chart.js, colors.ts's canvas patterns): the test project has no DOM
 * types, so it is loaded at run time, which also proves it imports in node without a DOM.
 */
type Row = Record<string, string | number | boolean>;
interface Spec {
  config: {
    type: string;
    data: {
      labels: string[];
      datasets: { label: string; data: (number | null)[]; backgroundColor: unknown; borderColor: unknown; borderDash?: number[] }[];
    };
    options: {
      scales: Record<string, unknown>;
      plugins: { tooltip: { callbacks: { label(item: unknown): string; afterTitle?(items: unknown[]): string } } };
    };
  };
  summary: string;
  table: { columns: string[]; rows: string[][] };
}
interface DailyOptions {
  days: string[];
  seriesKey: string;
  valueKey: string;
  kind: string;
  title: string;
  format: (n: number) => string;
}
const charts = jest.requireActual<{
  stackedDailyChart(rows: Row[], options: DailyOptions): Spec;
  eventsChart(rows: Row[], days: string[]): Spec;
  revenueChart(rows: Row[], days: string[]): Spec;
  arppuChart(rows: Row[]): Spec;
  retentionChart(rows: Row[], days: string[], zone: string, nowMs: number): Spec;
}>('../../../console/ui/charts');
const colors = jest.requireActual<{ seriesStyle(kind: string, name: string): { color: string } }>('../../../console/ui/colors');
const format = jest.requireActual<{ usd(n: number): string; pct(n: number): string; count(n: number): string }>(
  '../../../console/ui/format',
);

const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const daysFrom = (since: string, n: number) => Array.from({ length: n }, (_, i) => dayOf(Date.parse(`${since}T00:00:00Z`) + i * DAY));
const PARTNERS = ['meta', 'google', 'tiktok', 'organic', 'unity', 'applovin'];

describe("the console's charts", () => {
  it('draws every day of the period, 0 where the rows have none, each series in its stable colour', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.record({ at: fc.nat(59), partner: fc.constantFrom(...PARTNERS), installs: fc.integer({ min: 1, max: 500 }) }), {
          maxLength: 80,
        }),
        (length, specs) => {
          const days = daysFrom('2026-02-20', length);
          const rows: Row[] = specs
            .filter((s) => s.at < length)
            .map((s) => ({ day: days[s.at] as string, partner: s.partner, installs: s.installs }));
          const spec = charts.stackedDailyChart(rows, {
            days,
            seriesKey: 'partner',
            valueKey: 'installs',
            kind: 'partner',
            title: 'Installs',
            format: format.count,
          });
          expect(spec.config.data.labels).toEqual(days);
          const partners = [...new Set(rows.map((r) => r.partner as string))].sort();
          expect(spec.config.data.datasets.map((d) => d.label)).toEqual(partners);
          for (const dataset of spec.config.data.datasets) {
            expect(dataset.data).toHaveLength(days.length);
            // The oracle: the rows of the day and partner, summed.
            days.forEach((day, i) => {
              const expected = rows
                .filter((r) => r.day === day && r.partner === dataset.label)
                .reduce((s, r) => s + (r.installs as number), 0);
              expect(dataset.data[i]).toBe(expected);
            });
            expect(dataset.borderColor).toBe(colors.seriesStyle('partner', dataset.label).color);
          }
          expect(spec.table.rows.map((r) => r[0])).toEqual(days);
        },
      ),
    );
  });

  it('keeps a partner’s colour whatever other partners appear first', () => {
    const before = charts.stackedDailyChart([{ day: '2026-01-01', partner: 'snapchat', installs: 1 }], {
      days: ['2026-01-01'],
      seriesKey: 'partner',
      valueKey: 'installs',
      kind: 'partner',
      title: 'Installs',
      format: format.count,
    });
    const after = charts.stackedDailyChart(
      [
        { day: '2026-01-01', partner: 'aaa-new', installs: 1 },
        { day: '2026-01-01', partner: 'snapchat', installs: 1 },
      ],
      { days: ['2026-01-01'], seriesKey: 'partner', valueKey: 'installs', kind: 'partner', title: 'Installs', format: format.count },
    );
    const colourOf = (spec: Spec, name: string) => spec.config.data.datasets.find((d) => d.label === name)?.borderColor;
    expect(colourOf(after, 'snapchat')).toBe(colourOf(before, 'snapchat'));
    expect(colourOf(after, 'aaa-new')).not.toBe(colourOf(after, 'snapchat'));
  });

  it('writes dollars in the revenue chart’s tooltips and keeps ARPPU in a chart of its own', () => {
    const rows: Row[] = [
      { day: '2026-01-02', partner: 'meta', purchases: 3, revenue_usd: 14.97, arppu_usd: 7.485 },
      { day: '2026-01-03', partner: 'organic', purchases: 1, revenue_usd: 0.99, arppu_usd: 0.99 },
    ];
    const days = daysFrom('2026-01-01', 4);
    const revenue = charts.revenueChart(rows, days);
    expect(revenue.config.data.labels).toEqual(days);
    expect(Object.keys(revenue.config.options.scales).sort()).toEqual(['x', 'y']);
    expect(revenue.config.options.plugins.tooltip.callbacks.label({ dataset: { label: 'meta' }, parsed: { y: 14.97 } })).toBe(
      'meta: $14.97',
    );
    const arppu = charts.arppuChart(rows);
    expect(arppu.config.data.labels).toEqual(['meta', 'organic']);
    expect(arppu.config.data.datasets[0]?.data).toEqual([7.485, 0.99]);
    expect(arppu.summary).toContain('meta $7.49 (revenue $14.97, 2 payers)');
    expect(Object.keys(arppu.config.options.scales).sort()).toEqual(['x', 'y']);
  });

  it('counts events on every day, dashed past twelve names', () => {
    const days = daysFrom('2026-01-01', 3);
    const spec = charts.eventsChart([{ day: '2026-01-02', event_name: 'purchase', events: 4 }], days);
    expect(spec.config.data.datasets[0]?.data).toEqual([0, 4, 0]);
    expect(spec.config.options.plugins.tooltip.callbacks.label({ dataset: { label: 'purchase' }, parsed: { y: 1234 } })).toBe(
      'purchase: 1,234',
    );
  });

  it('leaves a retention point out exactly while the performance report would call it immature, and gives each day’s installs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 45 }),
        fc.integer({ min: -2, max: 50 }),
        fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata'),
        fc.integer({ min: 0, max: DAY - 1 }),
        fc.array(fc.record({ installs: fc.nat(30), d: fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30)) }), { minLength: 45, maxLength: 45 }),
        (length, nowOffset, zone, ms, specs) => {
          const days = daysFrom('2026-03-01', length);
          const nowMs = Date.parse('2026-03-01T00:00:00Z') + nowOffset * DAY + ms;
          const rows: Row[] = days.map((day, i) => {
            const s = specs[i] ?? { installs: 0, d: [0, 0, 0] };
            const rate = (n: number) => (s.installs ? Math.round((Math.min(n, s.installs) / s.installs) * 1e4) / 1e4 : 0);
            return {
              day,
              installs: s.installs,
              d1: s.d[0],
              d7: s.d[1],
              d30: s.d[2],
              d1_rate: rate(s.d[0]),
              d7_rate: rate(s.d[1]),
              d30_rate: rate(s.d[2]),
            };
          });
          const spec = charts.retentionChart(rows, days, zone, nowMs);
          expect(spec.config.data.labels).toEqual(days);
          const flags = ['d1_mature', 'd7_mature', 'd30_mature'] as const;
          spec.config.data.datasets.forEach((dataset, k) => {
            const column = (['d1_rate', 'd7_rate', 'd30_rate'] as const)[k] as string;
            days.forEach((day, i) => {
              const row = rows[i] as Row;
              const mature = maturityOf(day, zone, nowMs)[flags[k] as (typeof flags)[number]];
              expect(dataset.data[i]).toBe(mature && (row.installs as number) > 0 ? row[column] : null);
            });
          });
          days.forEach((day, i) => {
            expect(spec.config.options.plugins.tooltip.callbacks.afterTitle?.([{ dataIndex: i }])).toBe(
              `${format.count(rows[i]?.installs as number)} installs`,
            );
            expect(spec.table.rows[i]?.slice(0, 2)).toEqual([day, format.count(rows[i]?.installs as number)]);
          });
        },
      ),
      { numRuns: 40 },
    );
  });
});
