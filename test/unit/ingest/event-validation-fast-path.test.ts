import fc from 'fast-check';
import { MemoryFxRates } from '../../../functions/adapters/memory/fx-rates';
import { adServicesTokenOf } from '../../../functions/domain/adservices/token';
import { eventTexts } from '../../../functions/domain/audit/event-text';
import { isPlainObject } from '../../../functions/domain/common/json';
import { UUID_PATTERN } from '../../../functions/domain/common/uuid';
import { convertRevenue } from '../../../functions/domain/fx/event-revenue';
import { isCurrencyCode } from '../../../functions/domain/fx/rates';
import {
  AD_FORMATS,
  AD_REVENUE_PRECISIONS,
  AD_REVENUE_SOURCES,
  type BatchContext,
  EVENT_FAULT_FIELDS,
  EVENT_ID_PATTERN,
  EVENT_NAME_PATTERN,
  EVENT_RULES,
  INSTALL_EVENT,
  isIdText,
  isUuid,
  judgeEvents,
  MAX_EVENT_DEPTH,
  MAX_FUTURE_SKEW_MS,
  MAX_PAST_AGE_MS,
  MAX_PROPERTIES,
  MAX_PROPERTIES_JSON_BYTES,
  MAX_REVENUE_USD,
  type RejectionReason,
  validateEvent,
} from '../../../functions/domain/ingest/event-validation';

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);

/**
 * The rules as they were first written, one closure per rule over regular expressions and a
 * generic depth walk: the oracle the straight-line validator is held to.
 */
const absent = (value: unknown) => value === undefined || value === null;
const optional = (check: (value: unknown) => boolean) => (value: unknown) => absent(value) || check(value);
const stringOf = (min: number, max: number) => (value: unknown) => typeof value === 'string' && value.length >= min && value.length <= max;
const epochMs = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
/** Written apart from the validator: 1 to 4,096 characters, each a base64 letter (either alphabet) or padding. */
const adServicesToken = (value: unknown) =>
  typeof value === 'string' && value.length >= 1 && value.length <= 4096 && [...value].every((c) => /[A-Za-z0-9+/=_-]/.test(c));
const levels = (value: unknown): number =>
  typeof value !== 'object' || value === null ? 0 : 1 + Math.max(0, ...Object.values(value as object).map((child) => levels(child)));

const ORACLE: Record<RejectionReason, (event: Record<string, unknown>, batch: BatchContext) => boolean> = {
  bad_event: (event) => levels(event) <= MAX_EVENT_DEPTH,
  bad_event_id: (event, batch) =>
    typeof event.event_id === 'string' && EVENT_ID_PATTERN.test(event.event_id) && batch.claimEventId(event.event_id),
  bad_event_name: (event) => typeof event.event_name === 'string' && EVENT_NAME_PATTERN.test(event.event_name),
  bad_install_uuid: (event) => typeof event.install_uuid === 'string' && UUID_PATTERN.test(event.install_uuid),
  bad_timestamp: (event, batch) => {
    if (!Number.isSafeInteger(event.ts_ms)) return false;
    const corrected = (event.ts_ms as number) + batch.skewMs;
    return corrected <= batch.receivedMs + MAX_FUTURE_SKEW_MS && corrected >= batch.receivedMs - MAX_PAST_AGE_MS;
  },
  bad_revenue: (event) => optional((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_REVENUE_USD)(event.revenue_usd),
  bad_currency: (event) =>
    absent(event.currency) ||
    (absent(event.revenue_usd) &&
      typeof event.revenue === 'number' &&
      Number.isFinite(event.revenue) &&
      event.revenue >= 0 &&
      isCurrencyCode(event.currency)),
  bad_platform: (event) =>
    absent(event.platform) ? event.event_name !== INSTALL_EVENT : ['ios', 'android'].includes(event.platform as string),
  bad_device_id: (event) => optional(stringOf(1, 128))(event.device_id),
  bad_attribution: (event) => {
    const attribution = event.attribution;
    if (absent(attribution)) return true;
    if (event.event_name !== INSTALL_EVENT || !isPlainObject(attribution)) return false;
    return (
      optional(stringOf(1, 256))(attribution.click_id) &&
      optional(stringOf(0, 2048))(attribution.referrer) &&
      optional(epochMs)(attribution.referrer_click_ms) &&
      optional(epochMs)(attribution.install_begin_ms) &&
      optional(adServicesToken)(attribution.adservices_token)
    );
  },
  bad_properties: (event) => {
    const properties = event.properties;
    if (absent(properties)) return true;
    if (!isPlainObject(properties)) return false;
    const values = Object.values(properties);
    const flat = values.every(
      (v) => v === null || ['string', 'boolean'].includes(typeof v) || (typeof v === 'number' && Number.isFinite(v)),
    );
    return flat && values.length <= MAX_PROPERTIES && Buffer.byteLength(JSON.stringify(properties)) <= MAX_PROPERTIES_JSON_BYTES;
  },
  bad_ad_revenue: (event) => {
    if (event.event_name !== 'ad_revenue') return absent(event.ad_revenue);
    if (!absent(event.revenue_usd) || !absent(event.currency) || !isPlainObject(event.ad_revenue)) return false;
    const adRevenue = event.ad_revenue;
    return AD_MEMBERS.every(([name, check]) => check(adRevenue[name]));
  },
  bad_consent: (event) => {
    const consent = event.consent;
    if (absent(consent)) return true;
    return isPlainObject(consent) && CONSENT_MEMBERS.every(([name, check]) => optional(check)(consent[name])) && consentKeysKnown(consent);
  },
  bad_transaction_id: (event) => optional(printable(128))(event.transaction_id),
  bad_refund: (event) => {
    if (event.event_name !== 'refund') return absent(event.refund);
    if (!absent(event.revenue_usd) || !absent(event.currency) || !isPlainObject(event.refund)) return false;
    const refund = event.refund;
    return REFUND_MEMBERS.every(([name, check]) => check(refund[name], refund));
  },
};

const printable = (max: number) => (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= max && /^[\x21-\x7e]+$/.test(v);
/** The members of a refund event's object, in the rule's order; the third is the rule that one of the two ids is given. */
const REFUND_MEMBERS: [string, (value: unknown, refund: Record<string, unknown>) => boolean][] = [
  ['purchase_event_id', optional((v) => typeof v === 'string' && EVENT_ID_PATTERN.test(v))],
  ['transaction_id', optional(printable(128))],
  ['purchase_event_id', (_, refund) => !absent(refund.purchase_event_id) || !absent(refund.transaction_id)],
  ['revenue', (v) => typeof v === 'number' && Number.isFinite(v) && v > 0],
  ['currency', isCurrencyCode],
];

/** The members of an ad_revenue event's object, in the rule's order, each with its check as the rule words it. */
const AD_MEMBERS: [string, (value: unknown) => boolean][] = [
  ['source', (v) => (AD_REVENUE_SOURCES as readonly unknown[]).includes(v)],
  ['network', stringOf(1, 64)],
  ['format', (v) => (AD_FORMATS as readonly unknown[]).includes(v)],
  ['placement', optional(stringOf(0, 256))],
  ['ad_unit', optional(stringOf(0, 256))],
  ['revenue', (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0],
  ['currency', isCurrencyCode],
  ['precision', (v) => (AD_REVENUE_PRECISIONS as readonly unknown[]).includes(v)],
  ['impression_id', (v) => typeof v === 'string' && /^[\x21-\x7e]{1,128}$/.test(v)],
];

const TC_STRING = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const CONSENT_MEMBERS: [string, (value: unknown) => boolean][] = [
  ['gdpr_applies', (v) => typeof v === 'boolean'],
  ['tcf_string', (v) => typeof v === 'string' && v.length <= 4096 && TC_STRING.test(v)],
  ['ad_user_data', (v) => typeof v === 'boolean'],
  ['ad_personalization', (v) => typeof v === 'boolean'],
  ['third_party_sharing', (v) => typeof v === 'boolean'],
  ['measurement', (v) => typeof v === 'boolean'],
];
const consentKeysKnown = (consent: Record<string, unknown>) =>
  Object.keys(consent).every((key) => CONSENT_MEMBERS.some(([name]) => name === key));

function oracleReason(entry: unknown, batch: BatchContext): RejectionReason | undefined {
  if (!isPlainObject(entry)) return 'bad_event';
  return EVENT_RULES.find((rule) => !ORACLE[rule.reason](entry, batch))?.reason;
}

const inWindow = (ms: number, batch: BatchContext) =>
  ms <= batch.receivedMs + MAX_FUTURE_SKEW_MS && ms >= batch.receivedMs - MAX_PAST_AGE_MS;
const ATTRIBUTION_MEMBERS: [string, (value: unknown) => boolean][] = [
  ['click_id', stringOf(1, 256)],
  ['referrer', stringOf(0, 2048)],
  ['referrer_click_ms', epochMs],
  ['install_begin_ms', epochMs],
  ['adservices_token', adServicesToken],
];

/**
 * The field a rejection names, as the rules say it: none for the entry as a whole; sent_at_ms when
 * ts_ms is an integer in range read on the server's clock (so only the correction put it out);
 * the first member of attribution at fault when attribution is an object on an install; else the
 * rule's own field.
 */
function oracleField(reason: RejectionReason | undefined, entry: unknown, batch: BatchContext): string | undefined {
  if (reason === undefined || reason === 'bad_event') return undefined;
  const event = entry as Record<string, unknown>;
  if (reason === 'bad_timestamp')
    return Number.isSafeInteger(event.ts_ms) && inWindow(event.ts_ms as number, batch) ? 'sent_at_ms' : 'ts_ms';
  if (reason === 'bad_currency') {
    if (!absent(event.revenue_usd)) return 'revenue_usd';
    return typeof event.revenue === 'number' && Number.isFinite(event.revenue) && event.revenue >= 0 ? 'currency' : 'revenue';
  }
  if (reason === 'bad_ad_revenue' && event.event_name === 'ad_revenue') {
    if (!absent(event.revenue_usd)) return 'revenue_usd';
    if (!absent(event.currency)) return 'currency';
    const adRevenue = event.ad_revenue;
    if (!isPlainObject(adRevenue)) return 'ad_revenue';
    const member = AD_MEMBERS.find(([name, check]) => !check(adRevenue[name]));
    if (member) return `ad_revenue.${member[0]}`;
  }
  if (reason === 'bad_refund' && event.event_name === 'refund') {
    if (!absent(event.revenue_usd)) return 'revenue_usd';
    if (!absent(event.currency)) return 'currency';
    const refund = event.refund;
    if (!isPlainObject(refund)) return 'refund';
    const member = REFUND_MEMBERS.find(([name, check]) => !check(refund[name], refund));
    if (member) return `refund.${member[0]}`;
  }
  if (reason === 'bad_attribution' && event.event_name === INSTALL_EVENT && isPlainObject(event.attribution)) {
    const attribution = event.attribution;
    const member = ATTRIBUTION_MEMBERS.find(([name, check]) => !optional(check)(attribution[name]));
    if (member) return `attribution.${member[0]}`;
  }
  if (reason === 'bad_consent' && isPlainObject(event.consent)) {
    const consent = event.consent;
    // The members in the order the object lists them: the first one unknown or broken is at fault.
    for (const key of Object.keys(consent)) {
      const check = CONSENT_MEMBERS.find(([name]) => name === key)?.[1];
      if (!check) return 'consent';
      if (!optional(check)(consent[key])) return `consent.${key}`;
    }
  }
  return EVENT_RULES.find((rule) => rule.reason === reason)?.field;
}

function context(skewMs: number): BatchContext {
  const seen = new Set<string>();
  return { receivedMs: NOW, skewMs, claimEventId: (id) => seen.size !== seen.add(id).size };
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { inner: value };
  return value;
}

const idCharacters = [...'AZaz09._:-', ' ', '/', 'é', '０', '\n'];
const idText = (maxLength: number) => fc.array(fc.constantFrom(...idCharacters), { maxLength }).map((chars) => chars.join(''));
const anything = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 8 }),
  fc.constant([]),
  fc.constant({}),
);
const uuidLike = fc.oneof(
  fc.uuid(),
  fc.uuid().map((uuid) => uuid.toUpperCase()),
  fc
    .tuple(fc.uuid(), fc.nat(35), fc.constantFrom('g', 'G', '-', 'é', '０', 'İ', 'ſ', ' ', 'a', 'F'))
    .map(([uuid, at, c]) => uuid.slice(0, at) + c + uuid.slice(at + 1)),
  fc.tuple(fc.uuid(), fc.nat(36)).map(([uuid, at]) => uuid.slice(0, at) + uuid.slice(at + 1)),
  fc.uuid().map((uuid) => uuid.replaceAll('-', '')),
);
const optionalOf = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(fc.oneof(arbitrary, anything), { nil: undefined });

const tsMs = fc.oneof(
  fc.integer({ min: NOW - MAX_PAST_AGE_MS - 5, max: NOW + MAX_FUTURE_SKEW_MS + 5 }),
  fc.constantFrom(NOW - MAX_PAST_AGE_MS, NOW + MAX_FUTURE_SKEW_MS, NOW + 0.5, Number.MAX_SAFE_INTEGER, String(NOW)),
  anything,
);
/** The fields after ts_ms, each optional. */
const laterFields = {
  revenue_usd: optionalOf(fc.constantFrom(0, 4.99, MAX_REVENUE_USD, MAX_REVENUE_USD + 0.01, -1, Infinity, NaN, '4.99')),
  // Most events have no currency; one with a currency is rarer still with no revenue_usd.
  currency: fc.option(fc.oneof(fc.constantFrom('EUR', 'JPY', 'USD', 'eur', 'XYZ', 'EURO', ''), anything), { nil: undefined, freq: 2 }),
  revenue: optionalOf(fc.constantFrom(0, 10, 1e300, -1, Infinity, NaN, '10')),
  platform: optionalOf(fc.constantFrom('ios', 'android', 'web', 'IOS')),
  device_id: optionalOf(fc.oneof(fc.string({ maxLength: 3 }), fc.constant('d'.repeat(128)), fc.constant('d'.repeat(129)))),
  attribution: optionalOf(
    fc.record(
      {
        click_id: optionalOf(fc.constantFrom('', 'clk', 'c'.repeat(257))),
        referrer: optionalOf(fc.constantFrom('', 'r', 'r'.repeat(2049))),
        referrer_click_ms: optionalOf(fc.constantFrom(0, NOW, -5, 1.5)),
        install_begin_ms: optionalOf(fc.constantFrom(0, NOW, -5, 1.5)),
        adservices_token: optionalOf(fc.constantFrom('', 'dG9rZW4+Lw==', 'stub-true-1-2', 'a'.repeat(4097), 'tok en', 'tök')),
      },
      { requiredKeys: [] },
    ),
  ),
  properties: optionalOf(
    fc.oneof(
      fc.dictionary(
        fc.string({ maxLength: 3 }),
        fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant({}), fc.double()),
      ),
      fc.constant(Object.fromEntries(Array.from({ length: MAX_PROPERTIES + 1 }, (_, i) => [`k${i}`, i]))),
      fc.constant({ blob: '\u0000'.repeat(700) }),
      fc.constant({ blob: 'x'.repeat(4100) }),
    ),
  ),
  ad_revenue: optionalOf(
    fc.record(
      {
        source: optionalOf(fc.constantFrom(...AD_REVENUE_SOURCES, 'max', 'ADMOB')),
        network: optionalOf(fc.constantFrom('AppLovin', '', 'n'.repeat(64), 'n'.repeat(65))),
        format: optionalOf(fc.constantFrom(...AD_FORMATS, 'video')),
        placement: optionalOf(fc.constantFrom('', 'p', 'p'.repeat(256), 'p'.repeat(257))),
        ad_unit: optionalOf(fc.constantFrom('', 'u', 'u'.repeat(257))),
        revenue: optionalOf(fc.constantFrom(0, 0.0123, 1e300, -0.01, Infinity, NaN, '0.01')),
        currency: optionalOf(fc.constantFrom('USD', 'EUR', 'usd', 'XYZ')),
        precision: optionalOf(fc.constantFrom(...AD_REVENUE_PRECISIONS, 'rough')),
        impression_id: optionalOf(fc.constantFrom('imp-1', '!~', '', 'a b', 'i'.repeat(128), 'i'.repeat(129), 'é')),
      },
      { requiredKeys: [] },
    ),
  ),
  consent: optionalOf(
    fc.oneof(
      fc.record(
        {
          gdpr_applies: optionalOf(fc.boolean()),
          tcf_string: optionalOf(
            fc.constantFrom('CQuZP8AQuZP8AAKABAENAyFgAIIAAEAAAAAAPoQAwAAgLzA-gAAAAAAA.IAAA', 'a.b', 'a..b', 'tc string', 'T'.repeat(4097)),
          ),
          ad_user_data: optionalOf(fc.boolean()),
          ad_personalization: optionalOf(fc.boolean()),
          third_party_sharing: optionalOf(fc.boolean()),
          measurement: optionalOf(fc.boolean()),
          other: fc.option(fc.constant(true), { nil: undefined, freq: 6 }),
        },
        { requiredKeys: [] },
      ),
      fc.constant('granted'),
    ),
  ),
  transaction_id: optionalOf(fc.constantFrom('GPA.1234-5678', '', 't'.repeat(128), 't'.repeat(129), 'a b', 'é')),
  refund: optionalOf(
    fc.record(
      {
        purchase_event_id: optionalOf(fc.constantFrom('p-1', '', 'a b', 'p'.repeat(129))),
        transaction_id: optionalOf(fc.constantFrom('GPA.1', '', 't'.repeat(129))),
        revenue: optionalOf(fc.constantFrom(0, 4.99, -1, Infinity, NaN, '1')),
        currency: optionalOf(fc.constantFrom('USD', 'usd', 'XYZ')),
      },
      { requiredKeys: [] },
    ),
  ),
  extra: fc.option(
    fc.oneof(fc.constant(nested(MAX_EVENT_DEPTH - 1)), fc.constant(nested(MAX_EVENT_DEPTH)), fc.constant(nested(MAX_EVENT_DEPTH + 3))),
    { nil: undefined },
  ),
};
const event = fc.record(
  {
    event_id: fc.oneof(
      fc.constantFrom('e-1', 'e-2', 'e-3'),
      idText(4),
      fc.constant('i'.repeat(128)),
      fc.constant('i'.repeat(129)),
      anything,
    ),
    event_name: fc.oneof(
      fc.constantFrom(INSTALL_EVENT, 'purchase', 'ad_revenue', 'refund'),
      idText(3),
      fc.constant('n'.repeat(64)),
      fc.constant('n'.repeat(65)),
      anything,
    ),
    install_uuid: fc.oneof(uuidLike, anything),
    ts_ms: tsMs,
    ...laterFields,
  },
  { requiredKeys: [] },
);
const entry = fc.oneof({ weight: 9, arbitrary: event as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: anything });

/** A good attribution but for one member (laterFields' has several broken at once as often as not). */
const oneMemberBroken = fc
  .tuple(
    fc.constantFrom('click_id', 'referrer', 'referrer_click_ms', 'install_begin_ms', 'adservices_token'),
    fc.constantFrom(5, -5, 1.5, 'c'.repeat(2049), '', {}),
  )
  .map(([member, value]) => ({
    click_id: 'clk',
    referrer: 'r',
    referrer_click_ms: NOW,
    install_begin_ms: NOW,
    adservices_token: 'dG9rZW4=',
    [member]: value,
  }));

/** A good impression but for one member. */
const oneAdMemberBroken = fc
  .tuple(fc.constantFrom(...AD_MEMBERS.map(([name]) => name)), fc.constantFrom(5, -5, 'x', '', 'p'.repeat(300), {}))
  .map(([member, value]) => ({
    source: 'admob',
    network: 'AdMob',
    format: 'banner',
    placement: 'home',
    ad_unit: 'ca-app-pub-1',
    revenue: 0.0004,
    currency: 'EUR',
    precision: 'estimated',
    impression_id: 'resp-1',
    [member]: value,
  }));
/** A good refund but for one member, or one naming no purchase. */
const oneRefundMemberBroken = fc.oneof(
  fc
    .tuple(fc.constantFrom('purchase_event_id', 'transaction_id', 'revenue', 'currency'), fc.constantFrom(5, -5, 0, 'x y', '', {}))
    .map(([member, value]) => ({ purchase_event_id: 'p-1', transaction_id: 'GPA.1', revenue: 1.5, currency: 'EUR', [member]: value })),
  fc.constant({ revenue: 1, currency: 'USD' }),
);
/** A good consent but for one member, or no consent object at all (the field `consent` itself at fault). */
const oneConsentMemberBroken = fc.oneof(
  fc
    .tuple(fc.constantFrom(...CONSENT_MEMBERS.map(([name]) => name)), fc.constantFrom('yes', 1, 'x y', {}))
    .map(([member, value]) => ({ gdpr_applies: true, measurement: true, [member]: value })),
  fc.constantFrom<unknown>('granted', [], { granted: true }),
);

/**
 * A batch stamped with a skew (of a clock a little off, of a stamp kept for days, of a sent_at_ms
 * in seconds or 0), with events of any kind and events whose first three fields hold and whose
 * time is mostly right on the batch's clock, so that the draws reach the later rules often.
 */
const stampedBatch = fc
  .oneof(
    fc.integer({ min: -3 * MAX_FUTURE_SKEW_MS, max: 3 * MAX_FUTURE_SKEW_MS }),
    fc.integer({ min: -2 * MAX_PAST_AGE_MS, max: 2 * MAX_PAST_AGE_MS }),
    fc.constantFrom(NOW - Math.floor(NOW / 1000), NOW),
  )
  .chain((skewMs) => {
    const onBatchClock = fc.integer({ min: NOW - skewMs - MAX_PAST_AGE_MS, max: NOW - skewMs + MAX_FUTURE_SKEW_MS });
    const laterRuleEvent = fc.record(
      {
        event_id: fc.uuid(),
        event_name: fc.constantFrom(INSTALL_EVENT, 'purchase', 'ad_revenue', 'refund'),
        install_uuid: fc.uuid(),
        ts_ms: fc.oneof({ weight: 3, arbitrary: onBatchClock as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: tsMs }),
        ...laterFields,
        platform: fc.oneof(fc.constantFrom('ios', 'android'), laterFields.platform),
        attribution: fc.oneof(laterFields.attribution, oneMemberBroken),
        ad_revenue: fc.oneof(laterFields.ad_revenue, oneAdMemberBroken),
      },
      { requiredKeys: ['event_id', 'event_name', 'install_uuid', 'ts_ms'] },
    );
    // An impression whose every earlier rule holds, so that each member of ad_revenue is reached.
    const adRuleEvent = fc.record({
      event_id: fc.uuid(),
      event_name: fc.constant('ad_revenue'),
      install_uuid: fc.uuid(),
      ts_ms: onBatchClock,
      ad_revenue: oneAdMemberBroken,
    });
    // Good up to the last rule, so that the draws reach each member of consent.
    const lastRuleEvent = fc.record({
      event_id: fc.uuid(),
      event_name: fc.constant('purchase'),
      install_uuid: fc.uuid(),
      ts_ms: onBatchClock,
      consent: oneConsentMemberBroken,
    });
    // A purchase with a transaction id, and a refund good but for one member, past every earlier rule.
    const transactionRuleEvent = fc.record({
      event_id: fc.uuid(),
      event_name: fc.constant('purchase'),
      install_uuid: fc.uuid(),
      ts_ms: onBatchClock,
      revenue_usd: fc.constant(4.99),
      transaction_id: laterFields.transaction_id,
    });
    const refundRuleEvent = fc.record({
      event_id: fc.uuid(),
      event_name: fc.constant('refund'),
      install_uuid: fc.uuid(),
      ts_ms: onBatchClock,
      // Now and then no object at all, so the draws name `refund` itself, not only its members.
      refund: fc.oneof({ weight: 5, arbitrary: oneRefundMemberBroken }, fc.constantFrom<unknown>('refunded', 7, [], true)),
    });
    return fc.tuple(
      fc.constant(skewMs),
      fc.array(
        fc.oneof(entry, { weight: 2, arbitrary: laterRuleEvent }, adRuleEvent, lastRuleEvent, transactionRuleEvent, refundRuleEvent),
        { maxLength: 12 },
      ),
    );
  });

describe('the straight-line validator', () => {
  it('gives the reason the rules as first written give, in their order, for any batch', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 12 }),
        fc.integer({ min: -3 * MAX_FUTURE_SKEW_MS, max: 3 * MAX_FUTURE_SKEW_MS }),
        (entries, skewMs) => {
          const oracle = context(skewMs);
          const expected = entries.map((e) => oracleReason(e, oracle));
          const fast = context(skewMs);
          expect(entries.map((e) => validateEvent(e, fast))).toEqual(expected);
          expect(judgeEvents(entries, NOW - skewMs, NOW).verdicts.map((verdict) => verdict.reason)).toEqual(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('names the field the rules as first written name, whatever the batch is stamped with', () => {
    const named = new Map<string, number>();
    const unreached = () => [...EVENT_FAULT_FIELDS].filter((field) => !named.has(field));
    // More rounds (at most 4) only while a field has not been drawn yet: every run must hold.
    for (let round = 0; round === 0 || (round < 4 && unreached().length > 0); round++)
      fc.assert(
        fc.property(stampedBatch, ([skewMs, entries]) => {
          const oracle = context(skewMs);
          const expected = entries.map((e) => {
            const reason = oracleReason(e, oracle);
            return { reason, field: oracleField(reason, e, oracle) };
          });
          const verdicts = judgeEvents(entries, NOW - skewMs, NOW).verdicts;
          expect(verdicts.map(({ reason, field }) => ({ reason, field }))).toEqual(expected);
          for (const { field } of expected) if (field !== undefined) named.set(field, (named.get(field) ?? 0) + 1);
        }),
        { numRuns: 3000 },
      );
    // The draws reach every field, the two that are not simply a rule's own included.
    expect(unreached()).toEqual([]);
  });

  it('judges the same with the depths the scan of the body found, however the body nests', () => {
    const deepDropped = `{"events":[{"event_id":"e-1","event_name":"purchase","install_uuid":"0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b","ts_ms":${NOW},"x":${JSON.stringify(nested(40))},"x":1}],"sent_at_ms":${NOW}}`;
    const bodies = fc.array(entry, { minLength: 1, maxLength: 8 }).map((entries) => JSON.stringify({ events: entries, sent_at_ms: NOW }));
    fc.assert(
      fc.property(fc.oneof(bodies, fc.constant(deepDropped)), (body) => {
        const { events } = JSON.parse(body) as { events: unknown[] };
        const texts = eventTexts(Buffer.from(body), events.length);
        expect(texts).toBeDefined();
        expect(judgeEvents(events, NOW, NOW, texts!.depths)).toEqual(judgeEvents(events, NOW, NOW));
      }),
      { numRuns: 500 },
    );
  });

  it('takes each event id once per batch, however many ids and batches, and forgets them between batches', () => {
    // Ids from a small pool (duplicates in most batches), bad ones among them; batches of any size
    // up to 1,100 events, past 1,024 where a Set takes over from the id table; batch after batch,
    // so an id of one batch must not count as taken in the next.
    const pool = fc.array(fc.oneof(idText(6), fc.constantFrom('', 'has space', 'é', 'a'.repeat(129))), { minLength: 1, maxLength: 40 });
    const ids = fc
      .tuple(pool, fc.integer({ min: 0, max: 1100 }), fc.infiniteStream(fc.nat()))
      .map(([names, count, picks]) => [...picks.take(count)].map((pick) => names[pick % names.length] ?? ''));
    fc.assert(
      fc.property(fc.array(ids, { minLength: 1, maxLength: 3 }), (batches) => {
        for (const batch of batches) {
          const events = batch.map((event_id) => ({
            event_id,
            event_name: 'open',
            install_uuid: '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
            ts_ms: NOW,
            platform: 'ios',
          }));
          const taken = new Set<string>();
          const expected = batch.map((id) => (EVENT_ID_PATTERN.test(id) && taken.size !== taken.add(id).size ? undefined : 'bad_event_id'));
          expect(judgeEvents(events, NOW, NOW).verdicts.map((verdict) => verdict.reason)).toEqual(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tells the conversion every event it must price, and counts the accepted installs that carry an AdServices token', async () => {
    const rates = new MemoryFxRates({ '2025-06-15': { EUR: 1.08, JPY: 0.0066 } });
    const tokenInstall = {
      event_id: 'i-1',
      event_name: INSTALL_EVENT,
      install_uuid: '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
      ts_ms: NOW,
      platform: 'ios',
      revenue: 10,
      currency: 'EUR',
      attribution: { adservices_token: 'dG9rZW4+Lw==' },
    };
    const batches = fc.oneof(
      stampedBatch,
      stampedBatch.map(([skewMs, entries]): [number, unknown[]] => [skewMs, [...entries, { ...tokenInstall, ts_ms: NOW - skewMs }]]),
    );
    await fc.assert(
      fc.asyncProperty(batches, async ([skewMs, entries]) => {
        const judged = judgeEvents(entries, NOW - skewMs, NOW);
        // Priced from the judge's list as from every event: the same verdicts, counts and conversions.
        expect(await convertRevenue(rates, entries, judged)).toEqual(
          await convertRevenue(rates, entries, { ...judged, priced: undefined }),
        );
        const tokens = entries.filter((entry, i) => judged.verdicts[i]?.status === 'accepted' && adServicesTokenOf(entry) !== undefined);
        expect(judged.adServicesTokens).toBe(tokens.length);
      }),
      { numRuns: 1000 },
    );
  });

  it('checks UUIDs exactly as UUID_PATTERN does', () => {
    fc.assert(
      fc.property(fc.oneof(uuidLike, fc.string({ maxLength: 40 })), (text) => {
        expect(isUuid(text)).toBe(UUID_PATTERN.test(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('checks event ids and names exactly as their patterns do', () => {
    fc.assert(
      fc.property(
        fc.oneof(idText(8), fc.string({ maxLength: 8 }), fc.constantFrom('a'.repeat(64), 'a'.repeat(65), 'a'.repeat(128), 'a'.repeat(129))),
        (text) => {
          expect(isIdText(text, 128)).toBe(EVENT_ID_PATTERN.test(text));
          expect(isIdText(text, 64)).toBe(EVENT_NAME_PATTERN.test(text));
        },
      ),
      { numRuns: 5000 },
    );
  });
});
