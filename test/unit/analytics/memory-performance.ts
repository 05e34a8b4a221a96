import type { BuiltPage, BuiltWeek, PageStore, StaleDay } from '../../../functions/domain/analytics/pages';
import {
  COST_COUNTERS,
  type CostRow,
  type DimensionValues,
  dimsKey,
  NONE,
  PERF_COUNTERS,
  type PerfCounter,
} from '../../../functions/domain/analytics/performance';
import type {
  AnyCounter,
  DayFact,
  DayWindow,
  PageKind,
  PerformanceRows,
  StoredPerfPage,
  StoredWeekPage,
} from '../../../functions/domain/analytics/performance-report';

/**
 * The performance rows in memory, kept as the writers of docs/analytics.md keep them: a `perf`
 * row per day and dimensions, its `perf_partner` sums, the cost day and its `cost_partner` sums,
 * and each day's stamp, bumped after every write. It is both the report's and the compactor's store.
 */
export class MemoryPerformance implements PerformanceRows, PageStore {
  readonly perf = new Map<string, { day: string; dims: DimensionValues; counters: Partial<Record<PerfCounter, number>> }>();
  readonly cost = new Map<string, CostRow[]>();
  readonly stamp = new Map<string, { v: number; page_v?: number }>();
  readonly page = new Map<string, StoredPerfPage>();
  readonly partnerPage = new Map<string, StoredPerfPage>();
  readonly week = new Map<string, StoredWeekPage>();
  readonly partnerWeek = new Map<string, StoredWeekPage>();
  /** Called inside dayRows, after the rows are read and before they are returned: a write racing the compactor. */
  onDayRows?: (day: string) => void;

  addPerf(day: string, dims: DimensionValues, add: Partial<Record<PerfCounter, number>>): void {
    const key = `${day}\u0001${dimsKey(dims)}`;
    const row = this.perf.get(key) ?? { day, dims, counters: {} };
    for (const [name, value] of Object.entries(add) as [PerfCounter, number][]) row.counters[name] = (row.counters[name] ?? 0) + value;
    this.perf.set(key, row);
    this.bump(day);
  }

  /** A cost upload: rows of the same dimensions replace the day's. */
  putCost(day: string, rows: readonly CostRow[]): void {
    const byDims = new Map((this.cost.get(day) ?? []).map((row) => [dimsKey(row.dims), row]));
    for (const row of rows) byDims.set(dimsKey(row.dims), row);
    this.cost.set(day, [...byDims.values()]);
    this.bump(day);
  }

  private bump(day: string): void {
    const stamp = this.stamp.get(day) ?? { v: 0 };
    this.stamp.set(day, { ...stamp, v: stamp.v + 1 });
  }

  private inWindow = (day: string, window: DayWindow) => day >= window.firstDay && day <= window.lastDay;

  /** A window's days are read with DynamoDB's `BETWEEN`, which refuses a window that ends before it starts. */
  private read(window: DayWindow): void {
    if (window.lastDay < window.firstDay) throw new Error('BETWEEN operator requires upper bound >= lower bound');
  }

  async stamps(_appId: string, window: DayWindow) {
    this.read(window);
    return new Map([...this.stamp].filter(([day]) => this.inWindow(day, window)).map(([day, { v }]) => [day, v]));
  }

  pagesOf = (kind: PageKind) => (kind === 'rows' ? this.page : this.partnerPage);
  weeksOf = (kind: PageKind) => (kind === 'rows' ? this.week : this.partnerWeek);

  async pages(_appId: string, kind: PageKind, window: DayWindow) {
    this.read(window);
    return new Map([...this.pagesOf(kind)].filter(([day]) => this.inWindow(day, window)));
  }

  async weeks(_appId: string, kind: PageKind, window: DayWindow) {
    this.read(window);
    return new Map([...this.weeksOf(kind)].filter(([monday]) => this.inWindow(monday, window)));
  }

  dayPages(appId: string, kind: PageKind, window: DayWindow) {
    return this.pages(appId, kind, window);
  }

  async perfRows(_appId: string, window: DayWindow): Promise<DayFact[]> {
    this.read(window);
    return [...this.perf.values()]
      .filter((row) => this.inWindow(row.day, window))
      .map((row) => ({ ...row, counters: { ...row.counters } }));
  }

  async costDays(_appId: string, window: DayWindow) {
    this.read(window);
    return [...this.cost].filter(([day]) => this.inWindow(day, window)).map(([day, rows]) => ({ day, rows: [...rows] }));
  }

  async partnerRows(appId: string, window: DayWindow): Promise<DayFact[]> {
    return sumByPartner(await this.perfRows(appId, window), PERF_COUNTERS);
  }

  async costPartnerRows(appId: string, window: DayWindow): Promise<DayFact[]> {
    const facts = (await this.costDays(appId, window)).flatMap(({ day, rows }) =>
      rows.map((row) => ({
        day,
        dims: row.dims,
        counters: { cost_micros: row.cost_micros, network_clicks: row.network_clicks, impressions: row.impressions },
      })),
    );
    return sumByPartner(facts, COST_COUNTERS);
  }

  async staleDays(): Promise<StaleDay[]> {
    return [...this.stamp].filter(([, stamp]) => stamp.v !== stamp.page_v).map(([day, { v }]) => ({ day, v }));
  }

  async dayRows(appId: string, day: string) {
    const window = { firstDay: day, lastDay: day };
    const perf = await this.perfRows(appId, window);
    const cost = (this.cost.get(day) ?? []).map((row) => ({ ...row }));
    this.onDayRows?.(day);
    return { perf, cost };
  }

  async putPage(_appId: string, kind: PageKind, day: string, page: BuiltPage): Promise<void> {
    const current = this.pagesOf(kind).get(day);
    if (!current || current.v <= page.v) this.pagesOf(kind).set(day, page);
  }

  async putWeek(_appId: string, kind: PageKind, monday: string, week: BuiltWeek): Promise<void> {
    const sum = (vs: readonly number[]) => vs.reduce((a, b) => a + b, 0);
    const current = this.weeksOf(kind).get(monday);
    if (!current || sum(current.vs) <= sum(week.vs)) this.weeksOf(kind).set(monday, week);
  }

  async markBuilt(_appId: string, day: string, v: number): Promise<void> {
    const stamp = this.stamp.get(day);
    if (stamp && (stamp.page_v === undefined || stamp.page_v < v)) this.stamp.set(day, { ...stamp, page_v: v });
  }
}

function sumByPartner(facts: readonly DayFact[], counters: readonly AnyCounter[]): DayFact[] {
  const sums = new Map<string, { day: string; dims: DimensionValues; counters: Partial<Record<AnyCounter, number>> }>();
  for (const fact of facts) {
    const key = `${fact.day}\u0001${fact.dims[0]}`;
    const row = sums.get(key) ?? { day: fact.day, dims: [fact.dims[0], NONE, NONE, NONE] as DimensionValues, counters: {} };
    for (const name of counters) row.counters[name] = (row.counters[name] ?? 0) + (fact.counters[name] ?? 0);
    sums.set(key, row);
  }
  return [...sums.values()];
}
