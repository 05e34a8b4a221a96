import type { RowFamily } from '../aggregation/rows';
import type { ReportName } from './reports';

/**
 * Stored rows (integer counters, revenue in micro-dollars) rendered as the interface's row tables,
 * with the rounding of docs/architecture.md section 7: dollars and ARPPU to 6 decimals, rates to 4, rates 0 when
 * installs is 0, ARPPU 0 when nobody paid.
 */
export type StoredCounters = Readonly<Record<string, string | number | undefined>>;

export const REPORT_FAMILY: Record<ReportName, RowFamily> = {
  attribution: 'attribution',
  revenue: 'revenue',
  cohorts: 'cohorts',
  events: 'events',
};

const int = (row: StoredCounters, name: string): number => Number(row[name] ?? 0);
const text = (row: StoredCounters, name: string): string => String(row[name] ?? '');
const round = (value: number, decimals: number): number => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};
/** Micro-dollars are integers: dividing by a million is exact to 6 decimals already. */
const usd = (micros: number): number => micros / 1_000_000;
/**
 * A cohort's rows are written by different audit objects: a retention day can reach the row while
 * its install's own increment still waits for a retry (a store outage), so for a moment d1 may
 * exceed installs. A rate is a share and never above 1, as installs being 0 gives 0: the counters
 * are shown as they stand, and the rate is right again once the install's increment lands.
 */
const rate = (part: number, whole: number): number => (whole === 0 ? 0 : round(Math.min(part, whole) / whole, 4));

export const renderRow: Record<ReportName, (row: StoredCounters) => Record<string, string | number>> = {
  attribution: (row) => ({
    day: text(row, 'day'),
    partner: text(row, 'partner'),
    attribution_type: text(row, 'attribution_type'),
    installs: int(row, 'installs'),
    organic: int(row, 'organic'),
    reinstalls: int(row, 'reinstalls'),
    fraud_flagged: int(row, 'fraud_flagged'),
  }),
  revenue: (row) => {
    const micros = int(row, 'revenue_micros');
    const payers = int(row, 'payers');
    return {
      day: text(row, 'day'),
      partner: text(row, 'partner'),
      purchases: int(row, 'purchases'),
      revenue_usd: usd(micros),
      arppu_usd: payers === 0 ? 0 : round(micros / payers, 0) / 1_000_000,
    };
  },
  cohorts: (row) => {
    const installs = int(row, 'installs');
    const [d1, d7, d30] = [int(row, 'd1'), int(row, 'd7'), int(row, 'd30')];
    return {
      day: text(row, 'day'),
      installs,
      d1,
      d7,
      d30,
      d1_rate: rate(d1, installs),
      d7_rate: rate(d7, installs),
      d30_rate: rate(d30, installs),
    };
  },
  events: (row) => ({
    day: text(row, 'day'),
    event_name: text(row, 'event_name'),
    events: int(row, 'events'),
    unique_installs: int(row, 'unique_installs'),
    revenue_usd: usd(int(row, 'revenue_micros')),
  }),
};
