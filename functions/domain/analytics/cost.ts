/**
 * Ad spend (docs/analytics.md, "Cost"): the rows a tenant uploads with POST /api/v1/cost (or
 * `admin cost import`, or the console), checked, converted to dollars and merged into the app's
 * cost days. A row's identity is (date, partner, campaign, country, platform): sending it again
 * replaces it, so an upload can be repeated at will (networks restate cost for days, and a client
 * that got no answer sends again).
 *
 * Storage, per (app, local day): one `cost` item holding every row of the day (encodeCostDay),
 * replaced with a conditional write on its `ver`; the day's `cost_partner` sums, recomputed from
 * the day's rows at that `ver`; and `ADD v 1` on the day's `perf_stamp` so the compactor rebuilds
 * the day's page. Every write is idempotent or conditional, and the answer comes after all of
 * them: a request cut short anywhere is completed by its resend.
 */
import { FIRST_DAY, isAcceptedDay, LAST_DAY } from '../common/days';
import { ServiceError } from '../common/errors';
import { isPlainObject } from '../common/json';
import { pool } from '../common/pool';
import { convertToUsd, type FxRateStore, isCurrencyCode, readRatesFor, USD } from '../fx/rates';
import { COST_COUNTERS, type CostCounter, type CostRow, type DimensionValues, dimsKey, encodeCostDay, NONE } from './performance';

/**
 * The endpoint's refusals and their statuses (docs/openapi.yaml, `POST /api/v1/cost`). The 401s
 * and the 403 are the reports' (appOfKey), the body's codes the event API's names for the same
 * faults, bad_cost_row, cost_day_full and cost_day_too_large its own.
 */
export const COST_ERRORS = {
  empty_body: 400,
  bad_json: 400,
  bad_batch_shape: 400,
  bad_cost_row: 400,
  cost_day_full: 400,
  cost_day_too_large: 400,
  missing_bearer_token: 401,
  invalid_or_revoked_key: 401,
  insufficient_scope: 403,
  body_too_large: 413,
  store_unavailable: 503,
} as const;

export type CostErrorCode = keyof typeof COST_ERRORS;

/** The members of a cost row, in the order they are checked (and a CSV's columns). */
export const COST_FIELDS = ['date', 'partner', 'campaign', 'country', 'platform', 'cost', 'currency', 'clicks', 'impressions'] as const;
export type CostField = (typeof COST_FIELDS)[number];

/**
 * A refused upload: {"error": code}, plus for bad_cost_row, cost_day_full and cost_day_too_large the `index` of the
 * first row at fault (0-based, in the request), the `field` at fault when one is, and a `message`
 * saying what is wrong in words; for bad_batch_shape the member at fault (`rows`).
 */
export class CostUploadError extends ServiceError {
  declare readonly code: CostErrorCode;

  constructor(
    code: CostErrorCode,
    readonly detail: { readonly index?: number; readonly field?: CostField | 'rows'; readonly message?: string } = {},
  ) {
    super(COST_ERRORS[code], code);
    this.name = 'CostUploadError';
  }

  override body(): { readonly error: string } {
    return { error: this.code, ...this.detail };
  }
}

export const COST_PATH = '/api/v1/cost';

/** Rows a request may carry, at most (and the chunk `admin cost import` sends). */
export const MAX_COST_ROWS = 1000;
/** The body as sent, at most (the event API's limit). */
export const MAX_COST_BODY_BYTES = 1024 * 1024;
/** A cost amount, at most, in its currency: keeps micro-dollars exact integers. */
export const MAX_COST = 1_000_000_000;
/** A campaign or partner name, at most this many characters. */
export const MAX_NAME_LENGTH = 100;
/**
 * A day's encoded rows, at most (UTF-8 bytes): DynamoDB's item limit is 400 KB, and the rest is
 * headroom for the key and the counters. About 3,500 rows of ordinary names: a day with more
 * partner x campaign x country x platform rows than that is refused (cost_day_full).
 */
export const MAX_COST_DAY_BYTES = 350_000;
/**
 * What one counter of one app's day may add up to, over all its rows (micro-dollars of cost,
 * network clicks, impressions): $20,000,000 a day. A performance report adds at most 366 days of
 * an app, so every sum it or the partner rows make stays below 2^53, an exact integer in
 * JavaScript and in DynamoDB's SDK (366 x 2e13 = 7.3e15 < 9.007e15). A day past it would have
 * stored rows whose partner sums the SDK refuses (issue 36): it is refused (cost_day_too_large)
 * before anything is written.
 */
export const MAX_COST_DAY_SUM = 20_000_000_000_000;
/** Replaces of one day tried before the request gives up (503): only a storm of concurrent uploads of the day gets there. */
export const MAX_REPLACE_ATTEMPTS = 8;

/** A checked row, before its conversion to dollars. */
export interface CostInput {
  readonly date: string;
  readonly dims: DimensionValues;
  readonly cost: number;
  readonly currency: string;
  readonly network_clicks: number;
  readonly impressions: number;
}

/** A row refused: the field at fault (none when the row is not an object) and why. */
export interface RowFault {
  readonly field?: CostField;
  readonly message: string;
}

/**
 * The officially assigned ISO 3166-1 alpha-2 codes, and XK (Kosovo, user-assigned, which
 * CloudFront and the networks report).
 */
const ISO_3166 = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
    'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT ' +
    'MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
    'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG ' +
    'UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW'
  ).split(' '),
);

export const isCountryCode = (code: string): boolean => ISO_3166.has(code);

export const COST_PLATFORMS = ['ios', 'android'] as const;

// Control characters would break the row keys (dimsKey joins with U+0001) and nobody names a campaign with them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A present, non-empty value of an optional member (undefined, null and "" mean "not given"). */
const given = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

function nameFault(value: unknown, field: CostField): RowFault | undefined {
  if (typeof value !== 'string') return { field, message: `${field} must be text` };
  if (value.trim() === '') return { field, message: `${field} must not be empty` };
  if (value.length > MAX_NAME_LENGTH) return { field, message: `${field} must be at most ${MAX_NAME_LENGTH} characters` };
  if (CONTROL.test(value)) return { field, message: `${field} must not contain control characters` };
  return undefined;
}

const countFault = (value: unknown, field: CostField): RowFault | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? undefined
    : { field, message: `${field} must be a whole number of 0 or more` };

/**
 * One row, checked member by member in COST_FIELDS order; the first fault is the answer.
 *   date         required, YYYY-MM-DD, a real calendar day from 2000-01-01 to 2099-12-31 (the app's local day)
 *   partner      required, text of 1 to 100 characters without control characters
 *   campaign     optional, the same rule; missing or empty is "(none)"
 *   country      optional, ISO 3166-1 alpha-2 (any case, stored upper-case); missing or empty is "(none)"
 *   platform     optional, ios or android (any case, stored lower-case); missing or empty is "(none)"
 *   cost         required, a finite number from 0 to 1,000,000,000 (in `currency`)
 *   currency     optional, an ISO 4217 code (capitals); USD when missing or empty
 *   clicks       optional, a whole number of 0 or more (0 when missing)
 *   impressions  optional, the same
 * Any other member is refused first (a misspelt "cots" is neither silently nothing nor a missing cost).
 */
export function checkCostRow(row: unknown): { readonly row: CostInput } | { readonly fault: RowFault } {
  if (!isPlainObject(row)) return { fault: { message: 'a row must be a JSON object' } };
  const unknown = Object.keys(row).find((member) => !(COST_FIELDS as readonly string[]).includes(member));
  if (unknown !== undefined)
    return { fault: { message: `unknown member ${JSON.stringify(unknown)}; a row has ${COST_FIELDS.join(', ')}` } };
  const date = row.date;
  if (!isAcceptedDay(date))
    return { fault: { field: 'date', message: `date must be a calendar day from ${FIRST_DAY} to ${LAST_DAY}, YYYY-MM-DD` } };
  const partnerFault = nameFault(row.partner, 'partner');
  if (partnerFault) return { fault: partnerFault };
  if (given(row.campaign)) {
    const fault = nameFault(row.campaign, 'campaign');
    if (fault) return { fault };
  }
  const country = given(row.country) ? row.country : undefined;
  if (country !== undefined && (typeof country !== 'string' || !isCountryCode(country.toUpperCase())))
    return { fault: { field: 'country', message: 'country must be an ISO 3166-1 alpha-2 code, such as US' } };
  const platform = given(row.platform) ? row.platform : undefined;
  if (platform !== undefined && (typeof platform !== 'string' || !(COST_PLATFORMS as readonly string[]).includes(platform.toLowerCase())))
    return { fault: { field: 'platform', message: 'platform must be ios or android' } };
  const cost = row.cost;
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0 || cost > MAX_COST)
    return { fault: { field: 'cost', message: `cost must be a number from 0 to ${MAX_COST}` } };
  const currency = given(row.currency) ? row.currency : USD;
  if (!isCurrencyCode(currency)) return { fault: { field: 'currency', message: 'currency must be an ISO 4217 code, such as USD' } };
  for (const field of ['clicks', 'impressions'] as const) {
    const fault = given(row[field]) ? countFault(row[field], field) : undefined;
    if (fault) return { fault };
  }
  const campaign = given(row.campaign) ? String(row.campaign) : NONE;
  return {
    row: {
      date,
      dims: [String(row.partner), campaign, country?.toUpperCase() ?? NONE, platform?.toLowerCase() ?? NONE],
      cost,
      currency,
      network_clicks: given(row.clicks) ? Number(row.clicks) : 0,
      impressions: given(row.impressions) ? Number(row.impressions) : 0,
    },
  };
}

/** The body's rows: an object whose `rows` is an array of 1 to 1,000 entries (bad_batch_shape otherwise). */
export function rowsOfBody(body: unknown): readonly unknown[] {
  if (!isPlainObject(body)) throw new CostUploadError('bad_batch_shape', { message: 'the body must be a JSON object with rows' });
  const rows = body.rows;
  if (!Array.isArray(rows) || rows.length < 1 || rows.length > MAX_COST_ROWS)
    throw new CostUploadError('bad_batch_shape', { field: 'rows', message: `rows must be an array of 1 to ${MAX_COST_ROWS} rows` });
  return rows;
}

/** A cost row as a day holds it, with its day. */
export interface DatedCostRow {
  readonly date: string;
  readonly row: CostRow;
  /** The row's place in the request. */
  readonly index: number;
}

/**
 * The rows checked and converted to dollars, in request order: the first row at fault, whether
 * its shape or its conversion is what fails, is the bad_cost_row (with its index). Rates are read
 * once, for the days of the rows in other currencies before the first misshapen one.
 */
export async function convertCostRows(rates: FxRateStore, rows: readonly unknown[]): Promise<DatedCostRow[]> {
  const checked = rows.map(checkCostRow);
  const firstMisshapen = checked.findIndex((result) => 'fault' in result);
  const inputs = (firstMisshapen === -1 ? checked : checked.slice(0, firstMisshapen)).map((result) => (result as { row: CostInput }).row);
  const foreignDays = inputs.filter((input) => input.currency !== USD).map((input) => input.date);
  const table = foreignDays.length > 0 ? await readRatesFor(rates, foreignDays) : new Map();
  const converted = inputs.map((input, index): DatedCostRow => {
    const conversion = convertToUsd(table, input.cost, input.currency, input.date);
    if (!conversion)
      throw new CostUploadError('bad_cost_row', {
        index,
        field: 'currency',
        message: `no ${input.currency} rate for ${input.date} or the 7 days before it`,
      });
    const row: CostRow = {
      dims: input.dims,
      cost_micros: Math.round(conversion.usd * 1e6),
      network_clicks: input.network_clicks,
      impressions: input.impressions,
      currency: input.currency,
      cost: input.cost,
    };
    return { date: input.date, row, index };
  });
  const misshapen = checked[firstMisshapen];
  if (misshapen && 'fault' in misshapen) throw new CostUploadError('bad_cost_row', { index: firstMisshapen, ...misshapen.fault });
  return converted;
}

/** A day's rows as stored, and the version they are at (0: the day has no item yet). */
export interface CostDay {
  readonly rows: readonly CostRow[];
  readonly ver: number;
}

/** One partner's sums over a day's rows (a `cost_partner` row). */
export interface PartnerCost {
  readonly partner: string;
  readonly counters: Readonly<Record<CostCounter, number>>;
}

/** The cost rows of the aggregates table (functions/adapters/cost-store.ts; in memory in tests). */
export interface CostDays {
  /** The day's rows and ver, read consistently. */
  readDay(appId: string, day: string): Promise<CostDay>;
  /** Puts the day's rows at `ver` if the stored ver is still `ver - 1` (no item for 1); false when another write came first. */
  replaceDay(appId: string, day: string, rows: readonly CostRow[], ver: number): Promise<boolean>;
  /** Puts each partner's sums at `ver`, each only over an older ver (a later replace's sums are kept). */
  putPartnerCosts(appId: string, day: string, ver: number, sums: readonly PartnerCost[]): Promise<void>;
  /** ADD v 1 on the day's perf_stamp: the compactor rebuilds the day's page. */
  touchDay(appId: string, day: string): Promise<void>;
}

export interface CostUploadPorts {
  readonly days: CostDays;
  readonly rates: FxRateStore;
}

/** Days written at once, at most. */
const DAYS_IN_FLIGHT = 4;

/**
 * A stored day with the request's rows of that day merged in: a row of the same identity is
 * replaced where it stands, a new one added; of two with one identity in the request the last
 * wins. The rows keep their first-seen order (stored, then new), so re-sending changes nothing.
 */
export function mergeCostRows(stored: readonly CostRow[], sent: readonly CostRow[]): CostRow[] {
  const merged = new Map<string, CostRow>();
  for (const row of stored) merged.set(dimsKey(row.dims), row);
  for (const row of sent) merged.set(dimsKey(row.dims), row);
  return [...merged.values()];
}

/** The day's `cost_partner` rows: COST_COUNTERS summed over the day's rows by partner, in partner order. */
export function partnerCosts(rows: readonly CostRow[]): PartnerCost[] {
  const sums = new Map<string, Record<CostCounter, number>>();
  for (const row of rows) {
    const partner = row.dims[0];
    const counters = sums.get(partner) ?? { cost_micros: 0, network_clicks: 0, impressions: 0 };
    for (const counter of COST_COUNTERS) counters[counter] += row[counter];
    sums.set(partner, counters);
  }
  return [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([partner, counters]) => ({ partner, counters }));
}

const sameRows = (a: readonly CostRow[], b: readonly CostRow[]) => encodeCostDay(a) === encodeCostDay(b);
const encodedBytes = (rows: readonly CostRow[]) => Buffer.byteLength(encodeCostDay(rows), 'utf8');

/**
 * The request's rows merged into their days: per day, read the day, merge, refuse a day that
 * would pass MAX_COST_DAY_BYTES (cost_day_full, naming the first of the day's rows that does
 * not fit) or whose totals would pass MAX_COST_DAY_SUM (cost_day_too_large), put it if its ver is
 * unchanged (else read and merge again), then the day's partner sums at that ver and the day's
 * stamp. Every day is read and checked before any is written, so a refused request normally
 * stored nothing; only an upload of the same day racing it can make a later day overflow after
 * earlier ones were stored, and resending is harmless. Each merge is checked again before its
 * replace, so no day is stored whose partner sums could not be: the views by partner and by
 * campaign agree.
 * Returns how many rows the request had.
 */
export async function uploadCost(ports: CostUploadPorts, appId: string, rawRows: readonly unknown[]): Promise<{ accepted: number }> {
  const rows = await convertCostRows(ports.rates, rawRows);
  const byDay = new Map<string, DatedCostRow[]>();
  for (const dated of rows) byDay.set(dated.date, [...(byDay.get(dated.date) ?? []), dated]);
  const days = [...byDay.keys()].sort();

  const firstRead = new Map<string, CostDay>();
  await pool(days, DAYS_IN_FLIGHT, async (day) => {
    const stored = await ports.days.readDay(appId, day);
    checkDay(stored.rows, byDay.get(day) ?? []);
    firstRead.set(day, stored);
  });
  await pool(days, DAYS_IN_FLIGHT, async (day) => {
    const sent = byDay.get(day) ?? [];
    let stored = firstRead.get(day) ?? (await ports.days.readDay(appId, day));
    for (let attempt = 1; ; attempt++) {
      const merged = checkDay(stored.rows, sent);
      let ver = stored.ver;
      // Nothing new (a resend): the stored ver stands, and the sums and stamp below are redone in case the first send stopped before them.
      if (!sameRows(merged, stored.rows)) {
        if (!(await ports.days.replaceDay(appId, day, merged, stored.ver + 1))) {
          if (attempt >= MAX_REPLACE_ATTEMPTS) throw new Error(`cost day ${day} kept changing under ${MAX_REPLACE_ATTEMPTS} replaces`);
          stored = await ports.days.readDay(appId, day);
          continue;
        }
        ver = stored.ver + 1;
      }
      await ports.days.putPartnerCosts(appId, day, ver, partnerCosts(merged));
      await ports.days.touchDay(appId, day);
      return;
    }
  });
  return { accepted: rawRows.length };
}

/**
 * The merged day, when it fits: cost_day_full naming the first row of the request from which on
 * it does not fit its item, cost_day_too_large the first from which on a counter's day total
 * passes MAX_COST_DAY_SUM.
 */
function checkDay(stored: readonly CostRow[], sent: readonly DatedCostRow[]): CostRow[] {
  const merged = mergeCostRows(
    stored,
    sent.map((dated) => dated.row),
  );
  if (encodedBytes(merged) > MAX_COST_DAY_BYTES) throw dayFullAt(stored, sent);
  if (COST_COUNTERS.some((counter) => merged.reduce((sum, row) => sum + row[counter], 0) > MAX_COST_DAY_SUM))
    throw dayTooLargeAt(stored, sent);
  return merged;
}

/** The field of a row that carries each counter. */
const COUNTER_FIELDS: Readonly<Record<CostCounter, CostField>> = {
  cost_micros: 'cost',
  network_clicks: 'clicks',
  impressions: 'impressions',
};

/** cost_day_too_large at the first row of the request whose merge takes a counter's day total past the bound. */
function dayTooLargeAt(stored: readonly CostRow[], sent: readonly DatedCostRow[]): CostUploadError {
  const rows = new Map(stored.map((row) => [dimsKey(row.dims), row]));
  const totals = { cost_micros: 0, network_clicks: 0, impressions: 0 };
  for (const row of stored) for (const counter of COST_COUNTERS) totals[counter] += row[counter];
  for (const dated of sent) {
    const key = dimsKey(dated.row.dims);
    const before = rows.get(key);
    rows.set(key, dated.row);
    for (const counter of COST_COUNTERS) {
      totals[counter] += dated.row[counter] - (before?.[counter] ?? 0);
      if (totals[counter] > MAX_COST_DAY_SUM)
        return new CostUploadError('cost_day_too_large', {
          index: dated.index,
          field: COUNTER_FIELDS[counter],
          message: `${dated.date}'s ${counter === 'cost_micros' ? 'cost' : COUNTER_FIELDS[counter]} would add up to more than ${counter === 'cost_micros' ? `$${MAX_COST_DAY_SUM / 1e6}` : MAX_COST_DAY_SUM} from this row on; nothing of the request was stored`,
        });
    }
  }
  // Unreachable: the merged day's totals are the last running totals.
  return new CostUploadError('cost_day_too_large', { message: 'the day would add up to more than its bound' });
}

/** cost_day_full at the first row of the request whose merge passes the limit. */
function dayFullAt(stored: readonly CostRow[], sent: readonly DatedCostRow[]): CostUploadError {
  // The first row whose merge passes the limit: the encoding is "[" + the rows' encodings joined by "," + "]".
  const sizes = new Map(stored.map((row) => [dimsKey(row.dims), rowBytes(row)]));
  let total = 2 + Math.max(0, sizes.size - 1) + [...sizes.values()].reduce((sum, bytes) => sum + bytes, 0);
  for (const dated of sent) {
    const key = dimsKey(dated.row.dims);
    const bytes = rowBytes(dated.row);
    const before = sizes.get(key);
    total += before === undefined ? bytes + (sizes.size > 0 ? 1 : 0) : bytes - before;
    sizes.set(key, bytes);
    if (total > MAX_COST_DAY_BYTES)
      return new CostUploadError('cost_day_full', {
        index: dated.index,
        message: `${dated.date} would hold more than ${MAX_COST_DAY_BYTES} bytes of cost rows from this row on; nothing of the request was stored`,
      });
  }
  return new CostUploadError('cost_day_full', { message: `a day would hold more than ${MAX_COST_DAY_BYTES} bytes of cost rows` });
}

const rowBytes = (row: CostRow) => encodedBytes([row]) - 2;
