import { randomInt } from 'node:crypto';
import { isPlainObject } from '../common/json';
import { isCurrencyCode } from '../fx/rates';
import { consentFault, MAX_TCF_STRING_CHARS } from '../privacy/consent';

/**
 * The event rules of docs/ingestion.md, in its order: the first rule an event fails names its
 * rejection reason. EVENT_RULES is the table: docs/ingestion.md lists it (a unit test keeps the
 * two equal) and the benchmark's schema-library twin mirrors it; validateEvent checks the rules
 * in its order (a unit test holds it to that order, and a property test to the rules as first
 * written, one closure per rule).
 *
 * This runs once per event on the hot path, so it is one straight function of plain comparisons
 * and character loops: a closure per rule, each reading its fields again from event objects of
 * many shapes, and three anchored regular expressions (the case-insensitive UUID one above all)
 * cost markedly more (measured in docs/ingestion.md, "The CPU of one batch against its ceiling").
 */
export type RejectionReason =
  | 'bad_event'
  | 'bad_event_id'
  | 'bad_event_name'
  | 'bad_install_uuid'
  | 'bad_timestamp'
  | 'bad_revenue'
  | 'bad_currency'
  | 'bad_platform'
  | 'bad_device_id'
  | 'bad_attribution'
  | 'bad_properties'
  | 'bad_ad_revenue'
  | 'bad_consent'
  | 'bad_transaction_id'
  | 'bad_refund';

/** What an SDK sends; unknown fields are allowed, kept in the audit record and ignored. */
export interface SdkEvent {
  event_id: string;
  event_name: string;
  install_uuid: string;
  ts_ms: number;
  revenue_usd?: number;
  /** An amount in `currency` (docs/ingestion.md, "Currencies"): ingest converts it to revenue_usd. */
  revenue?: number;
  /** ISO 4217 code of `revenue`. */
  currency?: string;
  platform?: 'ios' | 'android';
  device_id?: string;
  attribution?: {
    click_id?: string;
    referrer?: string;
    referrer_click_ms?: number;
    install_begin_ms?: number;
    /** Apple's AdServices attribution token (docs/ios.md, section 4): exchanged by adservices-enrich, never logged. */
    adservices_token?: string;
  };
  properties?: Record<string, string | number | boolean | null>;
  /** Only on an `ad_revenue` event, and required there (docs/ingestion.md, "Ad revenue"). */
  ad_revenue?: AdRevenue;
  /** A purchase's store transaction id, which a refund may name (docs/ingestion.md, "Refunds"). */
  transaction_id?: string;
  /** Only on a `refund` event, and required there (docs/ingestion.md, "Refunds"). */
  refund?: Refund;
  [field: string]: unknown;
}

/** One ad impression's revenue, as a mediation SDK reports it (docs/ingestion.md, "Ad revenue"). */
export interface AdRevenue {
  source: AdRevenueSource;
  network: string;
  format: AdFormat;
  placement?: string | null;
  ad_unit?: string | null;
  /** The impression's revenue in `currency`: converted to dollars at ingest, as a purchase's. */
  revenue: number;
  currency: string;
  precision: AdRevenuePrecision;
  /** The mediation platform's id of the impression: an install counts each impression_id once. */
  impression_id: string;
}

/**
 * A purchase refunded, in part or whole (docs/ingestion.md, "Refunds"): the purchase it names,
 * by its event_id or its transaction_id (one at least), and the amount given back.
 */
export interface Refund {
  purchase_event_id?: string | null;
  transaction_id?: string | null;
  /** The amount refunded in `currency`, more than 0: converted to dollars at ingest, as a purchase's. */
  revenue: number;
  currency: string;
}

/** The reserved event name of a purchase's refund. */
export const REFUND_EVENT = 'refund';
export const MAX_TRANSACTION_ID_CHARS = 128;

/** The reserved event name of an ad impression's revenue. */
export const AD_REVENUE_EVENT = 'ad_revenue';
export const AD_REVENUE_SOURCES = ['applovin_max', 'ironsource_levelplay', 'admob', 'unity', 'custom'] as const;
export type AdRevenueSource = (typeof AD_REVENUE_SOURCES)[number];
export const AD_FORMATS = ['banner', 'interstitial', 'rewarded', 'app_open', 'native', 'other'] as const;
export type AdFormat = (typeof AD_FORMATS)[number];
export const AD_REVENUE_PRECISIONS = ['exact', 'estimated', 'publisher_defined'] as const;
export type AdRevenuePrecision = (typeof AD_REVENUE_PRECISIONS)[number];
/**
 * The most one impression can earn, in dollars once converted: a rewarded video at a $1,000 eCPM
 * earns $1, so $100 is far above any real impression and still stops a unit mix-up (cents sent
 * as dollars, a day's total sent as one impression) from swamping a day's figures.
 */
export const MAX_AD_REVENUE_USD = 100;
export const MAX_AD_NETWORK_CHARS = 64;
export const MAX_AD_PLACEMENT_CHARS = 256;
export const MAX_IMPRESSION_ID_CHARS = 128;

export const INSTALL_EVENT = 'install';
export const MAX_EVENT_DEPTH = 32;
export const MAX_FUTURE_SKEW_MS = 60 * 60 * 1000;
export const MAX_PAST_AGE_MS = 90 * 24 * 60 * 60 * 1000;
export const MAX_REVENUE_USD = 1_000_000;
export const MAX_PROPERTIES = 50;
export const MAX_PROPERTIES_JSON_BYTES = 4096;
export const MAX_EVENT_ID_CHARS = 128;
export const MAX_EVENT_NAME_CHARS = 64;
export const MAX_DEVICE_ID_CHARS = 128;

/** The character sets of event ids and names, as patterns for the schema twin; isIdText checks them. */
export const EVENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const EVENT_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The batch around an event: when it arrived, the client's clock offset, the ids already taken. */
export interface BatchContext {
  readonly receivedMs: number;
  /** received_ms - sent_at_ms: added to a device timestamp to put it on the server's clock. */
  readonly skewMs: number;
  /** Takes an event id for this batch; false when an earlier event already has it. */
  claimEventId(eventId: string): boolean;
}

export interface EventRule {
  readonly field: string;
  readonly rule: string;
  readonly reason: RejectionReason;
}

export const EVENT_RULES: readonly EventRule[] = [
  { field: '(the entry)', rule: `a JSON object, nested at most ${MAX_EVENT_DEPTH} levels deep`, reason: 'bad_event' },
  {
    field: 'event_id',
    rule: 'string of 1–128 characters from `[A-Za-z0-9._:-]`, unique within the batch (a later duplicate is rejected)',
    reason: 'bad_event_id',
  },
  {
    field: 'event_name',
    rule: 'string of 1–64 characters from `[A-Za-z0-9_.:-]`; `install` marks the first launch',
    reason: 'bad_event_name',
  },
  { field: 'install_uuid', rule: 'a UUID of any version, any case (stored lower-case)', reason: 'bad_install_uuid' },
  {
    field: 'ts_ms',
    rule: 'integer epoch ms on the device clock; corrected_ts = ts_ms + (received_ms − sent_at_ms) must be at most 1 hour ahead of and at most 90 days behind received_ms',
    reason: 'bad_timestamp',
  },
  { field: 'revenue_usd', rule: 'optional finite number from 0 to 1,000,000', reason: 'bad_revenue' },
  {
    field: 'currency',
    rule: "optional ISO 4217 code (`EUR`), only with `revenue` (a finite number of at least 0) and without `revenue_usd`; converted to US dollars at the rate of the event's UTC day, else the latest earlier one within 7 days (none: rejected), to at most 1,000,000. Without `currency`, `revenue` is an unknown field",
    reason: 'bad_currency',
  },
  { field: 'platform', rule: '`ios` or `android`; required on `install`, optional otherwise', reason: 'bad_platform' },
  {
    field: 'device_id',
    rule: 'optional string of 1–128 characters; never stored in the clear (the audit record keeps a hash)',
    reason: 'bad_device_id',
  },
  {
    field: 'attribution',
    rule: 'optional, only on `install`: an object whose `click_id` (1–256 chars), `referrer` (up to 2,048 chars), `referrer_click_ms` and `install_begin_ms` (non-negative integers), and `adservices_token` (1–4,096 characters of base64, `=`, `-`, `_`: [`ios.md`](ios.md#4-apple-ads-adservices-tokens)) are each optional',
    reason: 'bad_attribution',
  },
  {
    field: 'properties',
    rule: 'optional flat object (values string, number, boolean or null), at most 50 keys and 4 KiB as JSON',
    reason: 'bad_properties',
  },
  {
    field: 'ad_revenue',
    rule: `required on \`${AD_REVENUE_EVENT}\` and only there, which carries no \`revenue_usd\` (nor \`currency\`) of its own: an object with \`source\` (${AD_REVENUE_SOURCES.map((v) => `\`${v}\``).join(', ')}), \`network\` (1–${MAX_AD_NETWORK_CHARS} characters), \`format\` (${AD_FORMATS.map((v) => `\`${v}\``).join(', ')}), optional \`placement\` and \`ad_unit\` (up to ${MAX_AD_PLACEMENT_CHARS} characters each), \`revenue\` (a finite number of at least 0), \`currency\` (ISO 4217; converted as a purchase's, to at most ${MAX_AD_REVENUE_USD} dollars), \`precision\` (${AD_REVENUE_PRECISIONS.map((v) => `\`${v}\``).join(', ')}) and \`impression_id\` (1–${MAX_IMPRESSION_ID_CHARS} printable ASCII characters; an install counts each once)`,
    reason: 'bad_ad_revenue',
  },
  {
    field: 'consent',
    rule: `optional object (docs/privacy.md, "Consent") whose \`gdpr_applies\`, \`ad_user_data\`, \`ad_personalization\`, \`third_party_sharing\` and \`measurement\` are each an optional boolean and \`tcf_string\` an optional IAB TCF v2 string (base64url segments joined by dots, at most ${MAX_TCF_STRING_CHARS.toLocaleString('en-US')} characters); no other member`,
    reason: 'bad_consent',
  },
  {
    field: 'transaction_id',
    rule: `optional string of 1–${MAX_TRANSACTION_ID_CHARS} printable ASCII characters: a purchase's store transaction id, which a \`${REFUND_EVENT}\` may name`,
    reason: 'bad_transaction_id',
  },
  {
    field: 'refund',
    rule: `required on \`${REFUND_EVENT}\` and only there, which carries no \`revenue_usd\` (nor \`currency\`) of its own: an object with \`purchase_event_id\` (an event id) or \`transaction_id\` (1–${MAX_TRANSACTION_ID_CHARS} printable ASCII characters), one at least, naming the refunded purchase of the same install; \`revenue\` (the amount refunded, a finite number above 0) and \`currency\` (ISO 4217; converted as a purchase's, to at most 1,000,000 dollars)`,
    reason: 'bad_refund',
  },
];

/**
 * The field a rejection names, so that a client can tell what to fix: the event's field of the
 * rule it broke; for bad_attribution the member of `attribution` at fault when attribution is an
 * object on an install; for bad_timestamp `sent_at_ms`, the batch's, when ts_ms is an integer that
 * would be in range read on the server's clock, so that only the correction by sent_at_ms put it
 * out (a sent_at_ms in seconds, or one kept from an earlier attempt, rejects every event so). An
 * entry that is not an event (bad_event) names none. Unknown fields are never at fault, so
 * `sent_at_ms` cannot mean an event's own. docs/ingestion.md, "Which field is at fault".
 */
export const EVENT_FAULT_FIELDS = [
  'event_id',
  'event_name',
  'install_uuid',
  'ts_ms',
  'sent_at_ms',
  'revenue_usd',
  'revenue',
  'currency',
  'platform',
  'device_id',
  'attribution',
  'attribution.click_id',
  'attribution.referrer',
  'attribution.referrer_click_ms',
  'attribution.install_begin_ms',
  'attribution.adservices_token',
  'properties',
  'ad_revenue',
  'ad_revenue.source',
  'ad_revenue.network',
  'ad_revenue.format',
  'ad_revenue.placement',
  'ad_revenue.ad_unit',
  'ad_revenue.revenue',
  'ad_revenue.currency',
  'ad_revenue.precision',
  'ad_revenue.impression_id',
  'consent',
  'consent.gdpr_applies',
  'consent.tcf_string',
  'consent.ad_user_data',
  'consent.ad_personalization',
  'consent.third_party_sharing',
  'consent.measurement',
  'transaction_id',
  'refund',
  'refund.purchase_event_id',
  'refund.transaction_id',
  'refund.revenue',
  'refund.currency',
] as const;
export type EventFaultField = (typeof EVENT_FAULT_FIELDS)[number];

/** Why an entry is rejected: the reason of the first rule it breaks, and the field at fault. */
export interface EventFault {
  readonly reason: RejectionReason;
  readonly field: EventFaultField | undefined;
}

/** Every fault made once, so that judging allocates nothing for it. */
const fault = (reason: RejectionReason, field?: EventFaultField): EventFault => Object.freeze({ reason, field });
const NOT_AN_EVENT = fault('bad_event');
const BAD_EVENT_ID = fault('bad_event_id', 'event_id');
const BAD_EVENT_NAME = fault('bad_event_name', 'event_name');
const BAD_INSTALL_UUID = fault('bad_install_uuid', 'install_uuid');
const BAD_TS_MS = fault('bad_timestamp', 'ts_ms');
const BAD_SENT_AT_MS = fault('bad_timestamp', 'sent_at_ms');
const BAD_REVENUE = fault('bad_revenue', 'revenue_usd');
/** Exported for the conversion (functions/domain/fx/event-revenue.ts): no rate, or more than MAX_REVENUE_USD once converted. */
export const BAD_CURRENCY = fault('bad_currency', 'currency');
export const BAD_CONVERTED_REVENUE = fault('bad_currency', 'revenue');
const CURRENCY_WITH_REVENUE_USD = fault('bad_currency', 'revenue_usd');
const BAD_PLATFORM = fault('bad_platform', 'platform');
const BAD_DEVICE_ID = fault('bad_device_id', 'device_id');
const BAD_ATTRIBUTION = fault('bad_attribution', 'attribution');
const BAD_CLICK_ID = fault('bad_attribution', 'attribution.click_id');
const BAD_REFERRER = fault('bad_attribution', 'attribution.referrer');
const BAD_REFERRER_CLICK_MS = fault('bad_attribution', 'attribution.referrer_click_ms');
const BAD_INSTALL_BEGIN_MS = fault('bad_attribution', 'attribution.install_begin_ms');
const BAD_ADSERVICES_TOKEN = fault('bad_attribution', 'attribution.adservices_token');
const BAD_PROPERTIES = fault('bad_properties', 'properties');
const BAD_AD_REVENUE = fault('bad_ad_revenue', 'ad_revenue');
const AD_REVENUE_WITH_REVENUE_USD = fault('bad_ad_revenue', 'revenue_usd');
const AD_REVENUE_WITH_CURRENCY = fault('bad_ad_revenue', 'currency');
const BAD_AD_SOURCE = fault('bad_ad_revenue', 'ad_revenue.source');
const BAD_AD_NETWORK = fault('bad_ad_revenue', 'ad_revenue.network');
const BAD_AD_FORMAT = fault('bad_ad_revenue', 'ad_revenue.format');
const BAD_AD_PLACEMENT = fault('bad_ad_revenue', 'ad_revenue.placement');
const BAD_AD_UNIT = fault('bad_ad_revenue', 'ad_revenue.ad_unit');
/** Exported for the conversion: more than MAX_AD_REVENUE_USD once converted. */
export const BAD_AD_AMOUNT = fault('bad_ad_revenue', 'ad_revenue.revenue');
/** Exported for the conversion: no rate for the impression's currency and day (bad_currency, as a purchase's). */
export const BAD_AD_CURRENCY_RATE = fault('bad_currency', 'ad_revenue.currency');
const BAD_AD_CURRENCY = fault('bad_ad_revenue', 'ad_revenue.currency');
const BAD_AD_PRECISION = fault('bad_ad_revenue', 'ad_revenue.precision');
const BAD_IMPRESSION_ID = fault('bad_ad_revenue', 'ad_revenue.impression_id');
const BAD_CONSENT = fault('bad_consent', 'consent');
const BAD_TRANSACTION_ID = fault('bad_transaction_id', 'transaction_id');
const BAD_REFUND = fault('bad_refund', 'refund');
const REFUND_WITH_REVENUE_USD = fault('bad_refund', 'revenue_usd');
const REFUND_WITH_CURRENCY = fault('bad_refund', 'currency');
const BAD_REFUND_PURCHASE = fault('bad_refund', 'refund.purchase_event_id');
const BAD_REFUND_TRANSACTION = fault('bad_refund', 'refund.transaction_id');
/** Exported for the conversion: more than MAX_REVENUE_USD once converted. */
export const BAD_REFUND_AMOUNT = fault('bad_refund', 'refund.revenue');
/** Exported for the conversion: no rate for the refund's currency and day (bad_currency, as a purchase's). */
export const BAD_REFUND_CURRENCY_RATE = fault('bad_currency', 'refund.currency');
const BAD_REFUND_CURRENCY = fault('bad_refund', 'refund.currency');
const CONSENT_FAULTS = new Map<string, EventFault>(
  EVENT_FAULT_FIELDS.filter((field) => field.startsWith('consent')).map((field) => [field, fault('bad_consent', field)]),
);

/** The reason an entry is rejected, or undefined when it is accepted. */
export function validateEvent(entry: unknown, batch: BatchContext): RejectionReason | undefined {
  return eventFault(entry, batch)?.reason;
}

/** The reason an entry is rejected and the field at fault, or undefined when it is accepted. */
export function eventFault(entry: unknown, batch: BatchContext): EventFault | undefined {
  return isPlainObject(entry) ? brokenRule(entry, new EventFields().read(entry), batch, false) : NOT_AN_EVENT;
}

/**
 * The members of an event the rules read, taken in one pass over its keys (read). The events of a
 * batch come in many shapes, so reading each member by name is a slow (megamorphic) lookup, one
 * per member the rules know whether the event has it or not; a pass over the keys the event has
 * reads each as the key comes, at about half the cost over a batch (docs/ingestion.md, "The
 * members of an event, read in one pass"). One instance is read into event after event.
 */
class EventFields {
  id: unknown;
  name: unknown;
  installUuid: unknown;
  tsMs: unknown;
  revenueUsd: unknown;
  currency: unknown;
  revenue: unknown;
  platform: unknown;
  deviceId: unknown;
  attribution: unknown;
  properties: unknown;
  adRevenue: unknown;
  consent: unknown;
  transactionId: unknown;
  refund: unknown;

  /** The event's members the rules read (undefined for those it has not), as `event.member` reads them. */
  read(event: Record<string, unknown>): this {
    this.id = this.name = this.installUuid = this.tsMs = this.revenueUsd = undefined;
    this.currency = this.revenue = this.platform = this.deviceId = this.attribution = undefined;
    this.properties = this.adRevenue = this.consent = this.transactionId = this.refund = undefined;
    // Own keys and inherited enumerable ones, as a read by name finds them (a parsed object inherits none).
    for (const key in event) {
      switch (key) {
        case 'event_id':
          this.id = event[key];
          break;
        case 'event_name':
          this.name = event[key];
          break;
        case 'install_uuid':
          this.installUuid = event[key];
          break;
        case 'ts_ms':
          this.tsMs = event[key];
          break;
        case 'platform':
          this.platform = event[key];
          break;
        case 'device_id':
          this.deviceId = event[key];
          break;
        case 'properties':
          this.properties = event[key];
          break;
        case 'revenue_usd':
          this.revenueUsd = event[key];
          break;
        case 'attribution':
          this.attribution = event[key];
          break;
        case 'ad_revenue':
          this.adRevenue = event[key];
          break;
        case 'consent':
          this.consent = event[key];
          break;
        case 'currency':
          this.currency = event[key];
          break;
        case 'revenue':
          this.revenue = event[key];
          break;
        case 'transaction_id':
          this.transactionId = event[key];
          break;
        case 'refund':
          this.refund = event[key];
          break;
      }
    }
    return this;
  }
}

/**
 * The first rule of EVENT_RULES the event breaks, from its members as `fields` read them.
 * `shallow`: the event is already known to be nested no deeper than the limit (judgeEvents).
 */
function brokenRule(event: Record<string, unknown>, fields: EventFields, batch: BatchContext, shallow: boolean): EventFault | undefined {
  if (!shallow && nestedDeeperThan(event, MAX_EVENT_DEPTH)) return NOT_AN_EVENT;
  const id = fields.id;
  if (
    typeof id !== 'string' ||
    !(batch instanceof JudgedBatch ? batch.claimIdText(id) : isIdText(id, MAX_EVENT_ID_CHARS) && batch.claimEventId(id))
  )
    return BAD_EVENT_ID;
  const name = fields.name;
  if (typeof name !== 'string' || !isIdText(name, MAX_EVENT_NAME_CHARS)) return BAD_EVENT_NAME;
  const installUuid = fields.installUuid;
  if (typeof installUuid !== 'string' || !isUuid(installUuid)) return BAD_INSTALL_UUID;
  const tsMs = fields.tsMs;
  const corrected = correctedTimestamp(tsMs, batch);
  if (corrected === undefined || !inWindow(corrected, batch)) {
    // Only the correction moved a good device time out of range: look at sent_at_ms.
    return corrected !== undefined && inWindow(tsMs as number, batch) ? BAD_SENT_AT_MS : BAD_TS_MS;
  }
  // NaN fails both comparisons and Infinity the second: a number in range is finite.
  const revenue = fields.revenueUsd;
  if (!absent(revenue) && !(typeof revenue === 'number' && revenue >= 0 && revenue <= MAX_REVENUE_USD)) return BAD_REVENUE;
  // Its rate is looked up later (convertRevenue).
  const currency = fields.currency;
  if (!absent(currency)) {
    if (!absent(revenue)) return CURRENCY_WITH_REVENUE_USD;
    const amount = fields.revenue;
    if (!(typeof amount === 'number' && amount >= 0 && amount <= Number.MAX_VALUE)) return BAD_CONVERTED_REVENUE;
    if (!isCurrencyCode(currency)) return BAD_CURRENCY;
  }
  const platform = fields.platform;
  if (absent(platform) ? name === INSTALL_EVENT : platform !== 'ios' && platform !== 'android') return BAD_PLATFORM;
  const deviceId = fields.deviceId;
  if (!absent(deviceId) && !isDeviceId(deviceId)) return BAD_DEVICE_ID;
  const attribution = fields.attribution;
  if (!absent(attribution)) {
    const broken = name === INSTALL_EVENT ? brokenAttribution(attribution) : BAD_ATTRIBUTION;
    if (broken !== undefined) return broken;
  }
  const properties = fields.properties;
  if (!absent(properties) && !isProperties(properties)) return BAD_PROPERTIES;
  const adRevenue = fields.adRevenue;
  if (name === AD_REVENUE_EVENT) {
    if (!absent(revenue)) return AD_REVENUE_WITH_REVENUE_USD;
    if (!absent(currency)) return AD_REVENUE_WITH_CURRENCY;
    const broken = brokenAdRevenue(adRevenue);
    if (broken !== undefined) return broken;
  } else if (!absent(adRevenue)) return BAD_AD_REVENUE;
  const consent = fields.consent;
  if (!absent(consent)) {
    const field = consentFault(consent);
    if (field !== undefined) return CONSENT_FAULTS.get(field) ?? BAD_CONSENT;
  }
  const transactionId = fields.transactionId;
  if (!absent(transactionId) && !isPrintableId(transactionId, MAX_TRANSACTION_ID_CHARS)) return BAD_TRANSACTION_ID;
  const refund = fields.refund;
  if (name === REFUND_EVENT) {
    if (!absent(revenue)) return REFUND_WITH_REVENUE_USD;
    if (!absent(currency)) return REFUND_WITH_CURRENCY;
    return brokenRefund(refund);
  }
  if (!absent(refund)) return BAD_REFUND;
  return undefined;
}

/** The first member of a refund event's `refund` at fault, in the rule's order; undefined when none is. */
function brokenRefund(value: unknown): EventFault | undefined {
  if (!isPlainObject(value)) return BAD_REFUND;
  const { purchase_event_id, transaction_id } = value;
  if (!absent(purchase_event_id) && !(typeof purchase_event_id === 'string' && isIdText(purchase_event_id, MAX_EVENT_ID_CHARS))) {
    return BAD_REFUND_PURCHASE;
  }
  if (!absent(transaction_id) && !isPrintableId(transaction_id, MAX_TRANSACTION_ID_CHARS)) return BAD_REFUND_TRANSACTION;
  // One of the two names the purchase: without either the refund can be counted against nothing.
  if (absent(purchase_event_id) && absent(transaction_id)) return BAD_REFUND_PURCHASE;
  const amount = value.revenue;
  if (!(typeof amount === 'number' && amount > 0 && amount <= Number.MAX_VALUE)) return BAD_REFUND_AMOUNT;
  if (!isCurrencyCode(value.currency)) return BAD_REFUND_CURRENCY;
  return undefined;
}

/** An accepted refund event's amount and currency, which ingest converts; undefined for any other event. */
export function refundOf(event: Record<string, unknown>): { readonly amount: number; readonly currency: string } | undefined {
  if (event.event_name !== REFUND_EVENT) return undefined;
  const refund = event.refund;
  if (!isPlainObject(refund) || typeof refund.revenue !== 'number' || typeof refund.currency !== 'string') return undefined;
  return { amount: refund.revenue, currency: refund.currency };
}

const AD_SOURCES: ReadonlySet<unknown> = new Set(AD_REVENUE_SOURCES);
const AD_FORMAT_SET: ReadonlySet<unknown> = new Set(AD_FORMATS);
const AD_PRECISION_SET: ReadonlySet<unknown> = new Set(AD_REVENUE_PRECISIONS);

/** The first member of an ad_revenue event's `ad_revenue` at fault, in the rule's order; undefined when none is. */
function brokenAdRevenue(value: unknown): EventFault | undefined {
  if (!isPlainObject(value)) return BAD_AD_REVENUE;
  if (!AD_SOURCES.has(value.source)) return BAD_AD_SOURCE;
  if (!isStringOf(value.network, 1, MAX_AD_NETWORK_CHARS)) return BAD_AD_NETWORK;
  if (!AD_FORMAT_SET.has(value.format)) return BAD_AD_FORMAT;
  if (!absent(value.placement) && !isStringOf(value.placement, 0, MAX_AD_PLACEMENT_CHARS)) return BAD_AD_PLACEMENT;
  if (!absent(value.ad_unit) && !isStringOf(value.ad_unit, 0, MAX_AD_PLACEMENT_CHARS)) return BAD_AD_UNIT;
  const amount = value.revenue;
  if (!(typeof amount === 'number' && amount >= 0 && amount <= Number.MAX_VALUE)) return BAD_AD_AMOUNT;
  if (!isCurrencyCode(value.currency)) return BAD_AD_CURRENCY;
  if (!AD_PRECISION_SET.has(value.precision)) return BAD_AD_PRECISION;
  if (!isImpressionId(value.impression_id)) return BAD_IMPRESSION_ID;
  return undefined;
}

/** 1 to MAX_IMPRESSION_ID_CHARS printable ASCII characters (! to ~): no space, no control character. */
export const isImpressionId = (value: unknown): value is string => isPrintableId(value, MAX_IMPRESSION_ID_CHARS);

/** 1 to `max` printable ASCII characters (! to ~): an impression id, a store transaction id. */
export function isPrintableId(value: unknown, max: number): value is string {
  if (typeof value !== 'string' || value.length < 1 || value.length > max) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

/** An accepted ad_revenue event's amount and currency, which ingest converts; undefined for any other event. */
export function adRevenueOf(event: Record<string, unknown>): { readonly amount: number; readonly currency: string } | undefined {
  if (event.event_name !== AD_REVENUE_EVENT) return undefined;
  const adRevenue = event.ad_revenue;
  if (!isPlainObject(adRevenue) || typeof adRevenue.revenue !== 'number' || typeof adRevenue.currency !== 'string') return undefined;
  return { amount: adRevenue.revenue, currency: adRevenue.currency };
}

/** At most 1 hour ahead of and at most 90 days behind the batch's arrival. */
const inWindow = (ms: number, batch: BatchContext) =>
  ms <= batch.receivedMs + MAX_FUTURE_SKEW_MS && ms >= batch.receivedMs - MAX_PAST_AGE_MS;

/** Optional fields may be absent or null (many SDK encoders write null for a missing value). */
const absent = (value: unknown): value is undefined | null => value === undefined || value === null;
const isStringOf = (value: unknown, min: number, max: number) => typeof value === 'string' && value.length >= min && value.length <= max;
const isEpochMs = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isDeviceId = (value: unknown) => isStringOf(value, 1, MAX_DEVICE_ID_CHARS);

export const MAX_ADSERVICES_TOKEN_CHARS = 4096;
/** What AAAttribution.attributionToken() returns: base64 (standard or URL-safe), 1 to 4,096 characters. */
const ADSERVICES_TOKEN = /^[A-Za-z0-9+/=_-]+$/;
export const isAdServicesToken = (value: unknown): value is string =>
  isStringOf(value, 1, MAX_ADSERVICES_TOKEN_CHARS) && ADSERVICES_TOKEN.test(value as string);

/** The first member of an install's attribution at fault, in the rule's order; undefined when none is. */
function brokenAttribution(value: unknown): EventFault | undefined {
  if (!isPlainObject(value)) return BAD_ATTRIBUTION;
  const { click_id, referrer, referrer_click_ms, install_begin_ms, adservices_token } = value;
  if (!absent(click_id) && !isStringOf(click_id, 1, 256)) return BAD_CLICK_ID;
  if (!absent(referrer) && !isStringOf(referrer, 0, 2048)) return BAD_REFERRER;
  if (!absent(referrer_click_ms) && !isEpochMs(referrer_click_ms)) return BAD_REFERRER_CLICK_MS;
  if (!absent(install_begin_ms) && !isEpochMs(install_begin_ms)) return BAD_INSTALL_BEGIN_MS;
  if (!absent(adservices_token) && !isAdServicesToken(adservices_token)) return BAD_ADSERVICES_TOKEN;
  return undefined;
}

/** A string's JSON is at most 6 bytes per UTF-16 unit (\uXXXX) plus its quotes. */
const maxJsonBytes = (text: string) => 6 * text.length + 2;
/** The longest JSON number is 25 characters (-0.0000012345678901234567); true, false, null fewer. */
const MAX_JSON_SCALAR_BYTES = 25;
const isPropertyValue = (value: unknown) =>
  value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

function isProperties(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  let keys = 0;
  let maxBytes = 2;
  for (const key in value) {
    const property = value[key];
    if (++keys > MAX_PROPERTIES || !isPropertyValue(property)) return false;
    maxBytes += maxJsonBytes(key) + 2 + (typeof property === 'string' ? maxJsonBytes(property) : MAX_JSON_SCALAR_BYTES);
  }
  // Most property sets are far below the limit even at the worst case of every character
  // escaped; only the others pay for serialising them to count the exact bytes.
  return maxBytes <= MAX_PROPERTIES_JSON_BYTES || Buffer.byteLength(JSON.stringify(value), 'utf8') <= MAX_PROPERTIES_JSON_BYTES;
}

/** 1 for the characters of EVENT_ID_PATTERN and EVENT_NAME_PATTERN (the same set): A-Z a-z 0-9 . _ : - */
const ID_CHARACTERS = characterSet('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-');
const HEX_DIGITS = characterSet('0123456789abcdefABCDEF');

function characterSet(characters: string): Uint8Array {
  const set = new Uint8Array(128);
  for (let i = 0; i < characters.length; i++) set[characters.charCodeAt(i)] = 1;
  return set;
}

/** EVENT_ID_PATTERN with `max` for 128 (EVENT_NAME_PATTERN with 64), without a regular expression. */
export function isIdText(text: string, max: number): boolean {
  const length = text.length;
  if (length < 1 || length > max) return false;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 128 || ID_CHARACTERS[code] === 0) return false;
  }
  return true;
}

/** UUID_PATTERN (functions/domain/common/uuid.ts: 8-4-4-4-12 hex digits, any case), without a regular expression. */
export function isUuid(text: string): boolean {
  return (
    text.length === 36 &&
    text.charCodeAt(8) === DASH &&
    text.charCodeAt(13) === DASH &&
    text.charCodeAt(18) === DASH &&
    text.charCodeAt(23) === DASH &&
    isHexRun(text, 0, 8) &&
    isHexRun(text, 9, 13) &&
    isHexRun(text, 14, 18) &&
    isHexRun(text, 19, 23) &&
    isHexRun(text, 24, 36)
  );
}

const DASH = 0x2d;

function isHexRun(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code >= 128 || HEX_DIGITS[code] === 0) return false;
  }
  return true;
}

export function correctedTimestamp(tsMs: unknown, batch: Pick<BatchContext, 'skewMs'>): number | undefined {
  return Number.isSafeInteger(tsMs) ? (tsMs as number) + batch.skewMs : undefined;
}

export interface EventVerdict {
  readonly index: number;
  /** The event's id as sent when it is a string of at most 128 characters, else "". */
  readonly event_id: string;
  readonly status: 'accepted' | 'rejected';
  readonly reason?: RejectionReason;
  /** The field at fault of a rejected event (EVENT_FAULT_FIELDS); none for bad_event. */
  readonly field?: EventFaultField;
  readonly corrected_ts?: number;
}

export interface BatchVerdict {
  readonly verdicts: EventVerdict[];
  readonly accepted: number;
  readonly rejected: number;
  /**
   * judgeEvents' own, from the members it read: the indexes of the accepted events that may carry
   * an amount in a currency (an impression, a refund, or a `currency` member), the only ones
   * convertRevenue has to look at; and how many accepted installs carry an AdServices token.
   */
  readonly priced?: readonly number[];
  readonly adServicesTokens?: number;
}

/** The context of one batch: judgeEvents' own, a class so that no closure is made per batch. */
/**
 * The event ids of the batch being judged, as an open-addressing table kept from one batch to the
 * next: a slot is taken when its stamp is the batch's, so nothing is cleared between batches, and
 * each slot names the entry whose id sits there. The id's characters are checked and hashed in
 * one loop (claimIdText), where a Set would read them again to hash a string JSON.parse just made,
 * and grow its table five times over a hundred ids (docs/ingestion.md, "The event ids of a batch").
 * The hash is seeded per process, so a client cannot choose ids that all land in one slot. A batch
 * of more ids than half the table (parseBatch allows 1,000) uses a Set.
 */
const ID_SLOTS = 2048;
const idStamps = new Int32Array(ID_SLOTS);
const idEntries = new Int32Array(ID_SLOTS);
let idStamp = 0;
const ID_HASH_SEED = randomInt(0x7fffffff);

class JudgedBatch implements BatchContext {
  readonly skewMs: number;
  /** The ids taken so far, in the order taken: the table's slots name them by position. */
  private readonly ids: string[];
  private taken = 0;
  private readonly stamp: number;
  private readonly mask: number;
  private readonly seen: Set<string> | undefined;

  constructor(
    readonly receivedMs: number,
    sentAtMs: number,
    count: number,
  ) {
    this.skewMs = receivedMs - sentAtMs;
    this.ids = new Array(count);
    if (count > ID_SLOTS / 2) {
      this.seen = new Set();
      this.stamp = 0;
      this.mask = 0;
      return;
    }
    // At least twice the slots of the batch's ids: a probe seldom goes past a slot or two.
    let slots = 64;
    while (slots < 2 * count) slots *= 2;
    this.mask = slots - 1;
    if (idStamp === 0x7fffffff) {
      idStamps.fill(0);
      idStamp = 0;
    }
    this.stamp = ++idStamp;
  }

  /** BatchContext's: brokenRule calls claimIdText itself, which checks the id's characters as it hashes them. */
  claimEventId(eventId: string): boolean {
    return this.claimIdText(eventId);
  }

  /** isIdText(id, MAX_EVENT_ID_CHARS), and the id taken for this batch: false when either fails. */
  claimIdText(id: string): boolean {
    const length = id.length;
    if (length < 1 || length > MAX_EVENT_ID_CHARS) return false;
    let hash = ID_HASH_SEED;
    for (let i = 0; i < length; i++) {
      const code = id.charCodeAt(i);
      if (code >= 128 || ID_CHARACTERS[code] === 0) return false;
      hash = Math.imul(hash ^ code, 0x01000193);
    }
    if (this.seen !== undefined) return this.seen.size !== this.seen.add(id).size;
    const { ids, stamp, mask } = this;
    for (let slot = (hash ^ (hash >>> 16)) & mask; ; slot = (slot + 1) & mask) {
      if (idStamps[slot] !== stamp) {
        idStamps[slot] = stamp;
        idEntries[slot] = this.taken;
        ids[this.taken++] = id;
        return true;
      }
      if (ids[idEntries[slot] ?? -1] === id) return false;
    }
  }
}

/**
 * Every entry of a batch judged in input order; the counts are the verdicts counted by status.
 * `textDepths`, when given, are the levels each entry's JSON text nests (eventTexts): an entry
 * whose text is within the limit passes the depth rule without its parsed value being walked.
 */
export function judgeEvents(
  events: readonly unknown[],
  sentAtMs: number,
  receivedMs: number,
  textDepths?: readonly number[],
): BatchVerdict {
  const batch = new JudgedBatch(receivedMs, sentAtMs, events.length);
  let accepted = 0;
  const verdicts: EventVerdict[] = new Array(events.length);
  const fields = new EventFields();
  const priced: number[] = [];
  let adServicesTokens = 0;
  for (let index = 0; index < events.length; index++) {
    const entry = events[index];
    let fault: EventFault | undefined = NOT_AN_EVENT;
    let eventId = '';
    let corrected_ts: number | undefined;
    if (isPlainObject(entry)) {
      const depth = textDepths?.[index];
      fault = brokenRule(entry, fields.read(entry), batch, depth !== undefined && depth <= MAX_EVENT_DEPTH);
      const id = fields.id;
      if (typeof id === 'string' && id.length <= MAX_EVENT_ID_CHARS) eventId = id;
      corrected_ts = correctedTimestamp(fields.tsMs, batch);
      if (fault === undefined) {
        const name = fields.name;
        if (name === AD_REVENUE_EVENT || name === REFUND_EVENT || !absent(fields.currency)) priced.push(index);
        if (name === INSTALL_EVENT && isPlainObject(fields.attribution) && !absent(fields.attribution.adservices_token)) adServicesTokens++;
      }
    }
    if (fault === undefined) accepted++;
    // One shape for every verdict (reason and field undefined when accepted), so reading them stays fast.
    verdicts[index] =
      fault === undefined
        ? { index, event_id: eventId, status: 'accepted', reason: undefined, field: undefined, corrected_ts }
        : { index, event_id: eventId, status: 'rejected', reason: fault.reason, field: fault.field, corrected_ts };
  }
  return { verdicts, accepted, rejected: verdicts.length - accepted, priced, adServicesTokens };
}

/** An entry that JSON.stringify can write back (V8 overflows its stack on deep nesting). */
export function isStorable(entry: unknown): boolean {
  return typeof entry !== 'object' || entry === null || !nestedDeeperThan(entry, MAX_EVENT_DEPTH);
}

/**
 * Recursive, but never deeper than the limit: a hostile nesting depth stops the walk at the
 * limit and cannot overflow the stack. for...in and an index loop allocate nothing per object,
 * which matters because every entry of every batch is walked.
 */
function nestedDeeperThan(value: object, limit: number, depth = 1): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (deeperChild(value[i], limit, depth)) return true;
    }
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (Object.hasOwn(record, key) && deeperChild(record[key], limit, depth)) return true;
  }
  return false;
}

function deeperChild(child: unknown, limit: number, depth: number): boolean {
  if (typeof child !== 'object' || child === null) return false;
  return depth + 1 > limit || nestedDeeperThan(child, limit, depth + 1);
}
