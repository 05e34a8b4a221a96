import { UTC } from '../common/days';
import { parseReportQuery, windowDays } from '../reports/report-query';
import { REPORT_NAMES, type ReportName } from '../reports/reports';

/**
 * The four reports as SQL over the raw tables (docs/raw-data.md, "SQL: DuckDB locally, Athena in
 * AWS"). One text per report, which Athena (Trino) and DuckDB both run as it is: the stack saves
 * it as the report's named query, `admin sql --report` runs it on either engine, and the tests run
 * it on DuckDB against an oracle and against the Reporting API itself.
 *
 * What a row counts is the aggregator's rule (functions/domain/aggregation/contributions.ts). A
 * day is the app's local day of a corrected time (docs/reports.md, "Time zones"), computed in SQL
 * from corrected_ts and the time_zone parameter (the tables' install_day and event_day are UTC):
 * - attribution: installs by the install's day (of its corrected time), partner and attribution
 *   type; organic, reinstalls and fraud-flagged installs among them;
 * - cohorts: installs by install day; d1, d7 and d30 are the installs that have an event applied
 *   to them whose corrected time is in [n days, n+1 days) after the install's;
 * - revenue: events with revenue by the event's day and the partner of the install they are
 *   applied to; payers are the distinct install_uuids among them;
 * - events: every event by day and name, its revenue, and the distinct install_uuids.
 * An event is applied to the install its row names (install_uuid, install_event_id); one that came
 * before any install of its uuid (install_event_id null) to the uuid's first install.
 *
 * The rows come out in the Reporting API's shape and order, rendered as the API renders them
 * (functions/domain/reports/report-rows.ts): revenue_usd is micro-dollars / 10^6, arppu_usd the
 * revenue per payer rounded to the micro-dollar, rates rounded to 4 decimals. Each rounding is
 * written as the API's own arithmetic (round(x * 10^4) / 10^4 on doubles), so the engines and
 * JavaScript give the same number.
 *
 * Counts are count(CASE WHEN ... THEN 1 END), never count_if: DuckDB's count_if is a sum, NULL
 * when no row has a value, where Trino's is 0.
 *
 * Parameters are Athena's and DuckDB's `?`, in the order of ReportQuery.parameters: the app's id
 * (once per table read: Athena's partition projection injects app_id only from a value written
 * next to the table), the app's IANA time zone, and the window's first and last local day,
 * YYYY-MM-DD, both included (the days the API's since_ms/until_ms overlap, reportScope). A day
 * filter on the receive-day partition dt keeps Athena from reading older files: an event is
 * accepted at most an hour before its corrected time (docs/ingestion.md) and a local day starts
 * at most 14 hours before its UTC namesake, so no row of a day lies in a partition before the day
 * before.
 *
 * The local day is at_timezone(from_unixtime(seconds), zone) cast to a date: Trino's functions,
 * which take the zone as a value (AT TIME ZONE takes only a literal in Trino), and DuckDB shims of
 * them (DUCKDB_SHIMS) over its ICU time zones.
 */

export type ReportParameter = 'app_id' | 'time_zone' | 'first_day' | 'last_day';

export interface ReportQuery {
  readonly report: ReportName;
  /** The SQL, with a `?` for each parameter. */
  readonly sql: string;
  /** What each `?` stands for, in order. */
  readonly parameters: readonly ReportParameter[];
}

/** What a report is asked for: the app, its time zone and the window's local days (inclusive, YYYY-MM-DD). */
export interface ReportScope {
  readonly appId: string;
  /** The app's IANA time zone; UTC when absent. */
  readonly timeZone?: string;
  readonly firstDay: string;
  readonly lastDay: string;
}

export type ReportColumnKind = 'string' | 'integer' | 'number';

/** The columns each report's SQL returns, in order: the interface's row tables, field for field. */
export const REPORT_COLUMNS: Readonly<Record<ReportName, readonly { readonly name: string; readonly kind: ReportColumnKind }[]>> = {
  attribution: [
    { name: 'day', kind: 'string' },
    { name: 'partner', kind: 'string' },
    { name: 'attribution_type', kind: 'string' },
    { name: 'installs', kind: 'integer' },
    { name: 'organic', kind: 'integer' },
    { name: 'reinstalls', kind: 'integer' },
    { name: 'fraud_flagged', kind: 'integer' },
  ],
  revenue: [
    { name: 'day', kind: 'string' },
    { name: 'partner', kind: 'string' },
    { name: 'purchases', kind: 'integer' },
    { name: 'revenue_usd', kind: 'number' },
    { name: 'arppu_usd', kind: 'number' },
  ],
  cohorts: [
    { name: 'day', kind: 'string' },
    { name: 'installs', kind: 'integer' },
    { name: 'd1', kind: 'integer' },
    { name: 'd7', kind: 'integer' },
    { name: 'd30', kind: 'integer' },
    { name: 'd1_rate', kind: 'number' },
    { name: 'd7_rate', kind: 'number' },
    { name: 'd30_rate', kind: 'number' },
  ],
  events: [
    { name: 'day', kind: 'string' },
    { name: 'event_name', kind: 'string' },
    { name: 'events', kind: 'integer' },
    { name: 'unique_installs', kind: 'integer' },
    { name: 'revenue_usd', kind: 'number' },
  ],
};

/** Placeholders while a text is built: each becomes a `?`, and its name the next parameter. */
const APP = '{{app_id}}';
const ZONE = '{{time_zone}}';
const FIRST = '{{first_day}}';
const LAST = '{{last_day}}';

/**
 * The first receive day (dt) that can hold a row of the window: the day before its first day.
 * Written with a date and an interval, which both engines evaluate alike (a date in Trino, a
 * timestamp cast back to a date in DuckDB), so Athena prunes dt partitions with a constant.
 */
const FIRST_DT = `CAST(CAST(CAST(${FIRST} AS DATE) - INTERVAL '1' DAY AS DATE) AS VARCHAR)`;

/** The app's local day (YYYY-MM-DD) of an epoch-ms column. */
const localDay = (column: string) => `CAST(CAST(at_timezone(from_unixtime(${column} / 1e3), ${ZONE}) AS DATE) AS VARCHAR)`;

const DAY_MS = 86_400_000;
/** corrected_ts difference from the install in [n, n + 1) days: retained on day n. */
const retainedOn = (n: number) => `bool_or(since_install >= ${n * DAY_MS} AND since_install < ${(n + 1) * DAY_MS}) AS d${n}`;
/** The API's rate: round(part / whole, 4), as round(x * 10^4) / 10^4 on doubles. */
const rate = (n: number) => `round(CAST(d${n} AS DOUBLE) / CAST(installs AS DOUBLE) * 1e4) / 1e4 AS d${n}_rate`;

const TEMPLATES: Record<ReportName, string> = {
  attribution: `-- Attribution report: installs by install day, partner and attribution type.
WITH scanned AS (
  SELECT corrected_ts, partner, attribution_type, is_reinstall, fraud_reasons
  FROM installs
  WHERE app_id = ${APP}
    AND dt >= ${FIRST_DT}
),
dated AS (
  SELECT ${localDay('corrected_ts')} AS install_day, partner, attribution_type, is_reinstall, fraud_reasons
  FROM scanned
)
SELECT install_day AS "day",
       partner,
       attribution_type,
       count(*) AS installs,
       count(CASE WHEN attribution_type = 'organic' THEN 1 END) AS organic,
       count(CASE WHEN is_reinstall THEN 1 END) AS reinstalls,
       count(CASE WHEN json_array_length(fraud_reasons) > 0 THEN 1 END) AS fraud_flagged
FROM dated
WHERE install_day BETWEEN ${FIRST} AND ${LAST}
GROUP BY install_day, partner, attribution_type
ORDER BY "day", partner, attribution_type`,

  revenue: `-- Revenue report: revenue events but ad_revenue and refund by event day and the partner of the install each is applied to.
WITH first_installs AS (
  SELECT install_uuid, partner
  FROM installs
  WHERE app_id = ${APP}
    AND first_install
),
paid AS (
  -- An event that came before any install of its uuid (install_event_id null) is applied to the first install of the uuid.
  SELECT e.corrected_ts,
         e.install_uuid,
         e.revenue_micros,
         CASE WHEN e.install_event_id IS NULL THEN f.partner ELSE e.partner END AS partner
  FROM events e
  LEFT JOIN first_installs f ON f.install_uuid = e.install_uuid
  WHERE e.app_id = ${APP}
    AND e.dt >= ${FIRST_DT}
    AND e.revenue_micros > 0
    -- Ad revenue and refunds are no purchases: the revenue report is purchases and subscriptions, not netted (docs/reports.md).
    AND e.event_name NOT IN ('ad_revenue', 'refund')
),
dated AS (
  SELECT ${localDay('corrected_ts')} AS event_day, install_uuid, revenue_micros, partner
  FROM paid
  WHERE partner IS NOT NULL
),
totals AS (
  SELECT event_day, partner, count(*) AS purchases, sum(revenue_micros) AS revenue_micros, count(DISTINCT install_uuid) AS payers
  FROM dated
  WHERE event_day BETWEEN ${FIRST} AND ${LAST}
  GROUP BY event_day, partner
)
SELECT event_day AS "day",
       partner,
       purchases,
       CAST(revenue_micros AS DOUBLE) / 1e6 AS revenue_usd,
       round(CAST(revenue_micros AS DOUBLE) / CAST(payers AS DOUBLE)) / 1e6 AS arppu_usd
FROM totals
ORDER BY "day", partner`,

  cohorts: `-- Cohorts report: installs by install day, and those with an event 1, 7 and 30 days after the install.
WITH scanned AS (
  SELECT install_uuid, install_event_id, corrected_ts, first_install
  FROM installs
  WHERE app_id = ${APP}
    AND dt >= ${FIRST_DT}
),
dated AS (
  SELECT install_uuid, install_event_id, corrected_ts, ${localDay('corrected_ts')} AS install_day, first_install
  FROM scanned
),
cohort AS (
  SELECT install_uuid, install_event_id, corrected_ts, install_day, first_install
  FROM dated
  WHERE install_day BETWEEN ${FIRST} AND ${LAST}
),
applied AS (
  -- Each event with the install it is applied to: the one it names, else the first install of its uuid.
  SELECT c.install_uuid, c.install_event_id, e.corrected_ts - c.corrected_ts AS since_install
  FROM events e
  JOIN cohort c
    ON c.install_uuid = e.install_uuid
   AND (c.install_event_id = e.install_event_id OR (e.install_event_id IS NULL AND c.first_install))
  WHERE e.app_id = ${APP}
    AND e.dt >= ${FIRST_DT}
),
retained AS (
  SELECT install_uuid, install_event_id, ${retainedOn(1)}, ${retainedOn(7)}, ${retainedOn(30)}
  FROM applied
  GROUP BY install_uuid, install_event_id
),
days AS (
  SELECT c.install_day, count(*) AS installs, count(CASE WHEN r.d1 THEN 1 END) AS d1,
         count(CASE WHEN r.d7 THEN 1 END) AS d7,
         count(CASE WHEN r.d30 THEN 1 END) AS d30
  FROM cohort c
  LEFT JOIN retained r ON r.install_uuid = c.install_uuid AND r.install_event_id = c.install_event_id
  GROUP BY c.install_day
)
SELECT install_day AS "day", installs, d1, d7, d30, ${rate(1)}, ${rate(7)}, ${rate(30)}
FROM days
ORDER BY "day"`,

  events: `-- Events report: every event by event day and name, with its revenue and the distinct installs.
WITH scanned AS (
  SELECT corrected_ts, event_name, install_uuid, revenue_micros
  FROM events
  WHERE app_id = ${APP}
    AND dt >= ${FIRST_DT}
),
dated AS (
  SELECT ${localDay('corrected_ts')} AS event_day, event_name, install_uuid, revenue_micros
  FROM scanned
)
SELECT event_day AS "day",
       event_name,
       count(*) AS events,
       count(DISTINCT install_uuid) AS unique_installs,
       CAST(coalesce(sum(CASE WHEN revenue_micros > 0 THEN revenue_micros ELSE 0 END), 0) AS DOUBLE) / 1e6 AS revenue_usd
FROM dated
WHERE event_day BETWEEN ${FIRST} AND ${LAST}
GROUP BY event_day, event_name
ORDER BY "day", event_name`,
};

const PLACEHOLDER = /\{\{(app_id|time_zone|first_day|last_day)\}\}/g;

// The texts' comments hold no quote and no question mark: a `?` is a parameter to Athena.

/** A report's SQL with its `?` parameters, as both engines and the stack's named query run it. */
export function reportQuery(report: ReportName): ReportQuery {
  const parameters: ReportParameter[] = [];
  const sql = TEMPLATES[report].replace(PLACEHOLDER, (_match, name: ReportParameter) => {
    parameters.push(name);
    return '?';
  });
  return { report, sql, parameters };
}

/** The values of a query's parameters for a scope, in order (plain values, for DuckDB's binding). */
export function reportParameterValues(query: ReportQuery, scope: ReportScope): string[] {
  const values: Record<ReportParameter, string> = {
    app_id: scope.appId,
    time_zone: scope.timeZone ?? UTC,
    first_day: scope.firstDay,
    last_day: scope.lastDay,
  };
  return query.parameters.map((name) => values[name]);
}

/**
 * The scope of `admin sql --report`: the app, and the days of the window since_ms/until_ms as
 * the Reporting API reads them (parseReportQuery: the same defaults, refusals and 365-day limit;
 * windowDays: the app's local days the window overlaps).
 */
export function reportScope(
  appId: string,
  params: { readonly since_ms?: string; readonly until_ms?: string },
  nowMs: number,
  timeZone: string = UTC,
): ReportScope {
  const query = parseReportQuery({ since_ms: params.since_ms, until_ms: params.until_ms }, nowMs);
  const days = windowDays(query, timeZone);
  return { appId, timeZone, firstDay: days.firstDay, lastDay: days.lastDay };
}

/** A string as a SQL literal: Athena's ExecutionParameters are literals, not values. */
export const sqlLiteral = (value: string): string => `'${value.replaceAll("'", "''")}'`;

/** A saved query of the stack's Athena workgroup (lib/constructs/warehouse.ts, WarehouseQuery). */
export interface NamedReportQuery {
  readonly name: string;
  readonly description: string;
  readonly sql: string;
}

const PARAMETER_WORDS: Record<ReportParameter, string> = {
  app_id: "the app's id in quotes ('...')",
  time_zone: "the app's IANA time zone in quotes ('Europe/Berlin', 'UTC')",
  first_day: "the first day ('YYYY-MM-DD')",
  last_day: "the last day ('YYYY-MM-DD', included)",
};

/**
 * The four reports as the stack's named queries (report-attribution, report-revenue,
 * report-cohorts, report-events). Athena's console asks for each `?` in turn; the description
 * says what each one is, in order.
 */
export function athenaNamedQueries(): NamedReportQuery[] {
  return REPORT_NAMES.map((report) => {
    const query = reportQuery(report);
    const description =
      `The ${report} report of one app, as GET /api/v1/reports/${report} counts it (docs/raw-data.md). ` +
      `Parameters, in order: ${query.parameters.map((name) => PARAMETER_WORDS[name]).join(', ')}.`;
    return { name: `report-${report}`, description, sql: query.sql };
  });
}

/**
 * DuckDB macros for Trino functions that DuckDB lacks, created before every local query so that a
 * query written for Athena runs locally too. The four reports use from_unixtime and at_timezone
 * for their local days. Each behaves as Trino's for the tables' types.
 */
export const DUCKDB_SHIMS: readonly { readonly name: string; readonly sql: string }[] = [
  // Trino: seconds since the epoch (double) to a timestamp with time zone (the session's, UTC in Athena).
  { name: 'from_unixtime', sql: 'CREATE MACRO from_unixtime(seconds) AS to_timestamp(seconds)' },
  // Trino: a timestamp with time zone moved to another zone; cast to a date, the zone's calendar day
  // (DuckDB: timezone() gives the zone's wall time, whose date is the same).
  { name: 'at_timezone', sql: 'CREATE MACRO at_timezone(ts, zone) AS timezone(zone, ts)' },
  // Trino: a timestamp to seconds since the epoch, a double.
  { name: 'to_unixtime', sql: 'CREATE MACRO to_unixtime(ts) AS CAST(epoch_ms(ts) AS DOUBLE) / 1e3' },
  // Trino: the scalar at a JSON path of JSON text (properties, fraud_reasons, decision), as varchar.
  { name: 'json_extract_scalar', sql: 'CREATE MACRO json_extract_scalar(json, path) AS json_extract_string(json, path)' },
  // Trino: whether a string matches a regular expression anywhere.
  { name: 'regexp_like', sql: 'CREATE MACRO regexp_like(s, pattern) AS regexp_matches(s, pattern)' },
  // Trino: an approximate count of distinct values (DuckDB: HyperLogLog too).
  { name: 'approx_distinct', sql: 'CREATE MACRO approx_distinct(x) AS approx_count_distinct(x)' },
];
