import { num, type ReportRow } from './report-rows';

/**
 * The SKAN page's sums of the SKAN report's rows (docs/ios.md section 3): by partner and postback
 * window, a totals row, and postbacks per day by partner on every day of the period. DOM-free,
 * so the unit tests hold it to an oracle in node.
 */

/** The report's counters, summed as they are. */
export const SKAN_COUNTS = ['postbacks', 'installs', 'redownloads', 'with_fine_value', 'with_coarse_value', 'without_value'] as const;
export type SkanCount = (typeof SKAN_COUNTS)[number];

export interface SkanGroup extends Record<SkanCount, number> {
  readonly partner: string;
  /** postback_sequence_index (0, 1, 2); undefined on the totals row. */
  readonly window: number | undefined;
  /** Dollars, summed in whole cents (each row is rounded to cents by the report). */
  readonly estimated_revenue_usd: number;
}

const cents = (dollars: number): number => Math.round(dollars * 100);

function empty(
  partner: string,
  window: number | undefined,
): Record<SkanCount, number> & { partner: string; window: number | undefined; cents: number } {
  return {
    partner,
    window,
    cents: 0,
    postbacks: 0,
    installs: 0,
    redownloads: 0,
    with_fine_value: 0,
    with_coarse_value: 0,
    without_value: 0,
  };
}

function finish(sums: ReturnType<typeof empty>): SkanGroup {
  const { cents: total, ...counts } = sums;
  return { ...counts, estimated_revenue_usd: total / 100 };
}

/** The rows summed by partner, then postback window (both in order), and the totals row. */
export function skanByPartnerAndWindow(rows: readonly ReportRow[]): { groups: SkanGroup[]; total: SkanGroup } {
  const groups = new Map<string, ReturnType<typeof empty>>();
  const total = empty('Total', undefined);
  for (const row of rows) {
    const partner = String(row.partner ?? '');
    const window = num(row.postback_sequence_index);
    const key = JSON.stringify([partner, window]);
    let sums = groups.get(key);
    if (!sums) {
      sums = empty(partner, window);
      groups.set(key, sums);
    }
    for (const target of [sums, total]) {
      for (const name of SKAN_COUNTS) target[name] += num(row[name]);
      target.cents += cents(num(row.estimated_revenue_usd));
    }
  }
  const ordered = [...groups.values()].sort(
    (a, b) => (a.partner < b.partner ? -1 : a.partner > b.partner ? 1 : 0) || (a.window ?? 0) - (b.window ?? 0),
  );
  return { groups: ordered.map(finish), total: finish(total) };
}

/** Postbacks per day by partner on every day given (0 on a day without any), partners in order. */
export function postbacksPerDay(
  rows: readonly ReportRow[],
  days: readonly string[],
): { partners: string[]; values: (partner: string) => number[] } {
  const byKey = new Map<string, number>();
  const partners = new Set<string>();
  for (const row of rows) {
    const partner = String(row.partner ?? '');
    partners.add(partner);
    const key = `${row.day}\u0000${partner}`;
    byKey.set(key, (byKey.get(key) ?? 0) + num(row.postbacks));
  }
  return {
    partners: [...partners].sort(),
    values: (partner) => days.map((day) => byKey.get(`${day}\u0000${partner}`) ?? 0),
  };
}

/** "0 (0–2 days)", "1 (3–7 days)", "2 (8–35 days)": SKAdNetwork 4's postback windows. */
export function windowLabel(window: number): string {
  const spans = ['0–2 days', '3–7 days', '8–35 days'];
  return `${window} (${spans[window] ?? 'unknown'})`;
}
