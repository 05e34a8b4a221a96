import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { UUID_PATTERN } from '../functions/domain/common/uuid';
import { isCurrencyCode } from '../functions/domain/fx/rates';
import {
  AD_FORMATS,
  AD_REVENUE_EVENT,
  AD_REVENUE_PRECISIONS,
  AD_REVENUE_SOURCES,
  type BatchContext,
  EVENT_ID_PATTERN,
  EVENT_NAME_PATTERN,
  EVENT_RULES,
  INSTALL_EVENT,
  isStorable,
  MAX_AD_NETWORK_CHARS,
  MAX_AD_PLACEMENT_CHARS,
  MAX_EVENT_DEPTH,
  MAX_FUTURE_SKEW_MS,
  MAX_IMPRESSION_ID_CHARS,
  MAX_PAST_AGE_MS,
  MAX_PROPERTIES,
  MAX_PROPERTIES_JSON_BYTES,
  MAX_REVENUE_USD,
  MAX_TRANSACTION_ID_CHARS,
  REFUND_EVENT,
  type RejectionReason,
} from '../functions/domain/ingest/event-validation';
import { MAX_TCF_STRING_CHARS, TCF_STRING_PATTERN } from '../functions/domain/privacy/consent';

/**
 * The schema-library twin of functions/domain/ingest/event-validation.ts, written with zod 4 for the
 * benchmark only. It encodes the same rules (the unit tests check that both give the same
 * reason for a varied corpus), so the timings compare like with like.
 */
let batch: BatchContext;
const nullish = <T extends z.ZodType>(schema: T) => schema.nullish();
const epochMs = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const zodAdRevenue = z.looseObject({
  source: z.enum(AD_REVENUE_SOURCES),
  network: z.string().min(1).max(MAX_AD_NETWORK_CHARS),
  format: z.enum(AD_FORMATS),
  placement: nullish(z.string().max(MAX_AD_PLACEMENT_CHARS)),
  ad_unit: nullish(z.string().max(MAX_AD_PLACEMENT_CHARS)),
  revenue: z.number().min(0),
  currency: z.string().refine(isCurrencyCode),
  precision: z.enum(AD_REVENUE_PRECISIONS),
  impression_id: z.string().regex(new RegExp(`^[\\x21-\\x7e]{1,${MAX_IMPRESSION_ID_CHARS}}$`)),
});

const printableId = z.string().regex(new RegExp(`^[\\x21-\\x7e]{1,${MAX_TRANSACTION_ID_CHARS}}$`));
const zodRefund = z
  .looseObject({
    purchase_event_id: nullish(z.string().regex(EVENT_ID_PATTERN)),
    transaction_id: nullish(printableId),
    revenue: z.number().gt(0),
    currency: z.string().refine(isCurrencyCode),
  })
  .refine((refund) => (refund.purchase_event_id ?? refund.transaction_id ?? null) !== null);

const zodEvent = z
  .looseObject({
    event_id: z
      .string()
      .regex(EVENT_ID_PATTERN)
      .refine((id) => batch.claimEventId(id)),
    event_name: z.string().regex(EVENT_NAME_PATTERN),
    install_uuid: z.string().regex(UUID_PATTERN),
    ts_ms: z
      .number()
      .int()
      .min(Number.MIN_SAFE_INTEGER)
      .max(Number.MAX_SAFE_INTEGER)
      .refine(
        (ts) => ts + batch.skewMs <= batch.receivedMs + MAX_FUTURE_SKEW_MS && ts + batch.skewMs >= batch.receivedMs - MAX_PAST_AGE_MS,
      ),
    revenue_usd: nullish(z.number().min(0).max(MAX_REVENUE_USD)),
    platform: nullish(z.enum(['ios', 'android'])),
    device_id: nullish(z.string().min(1).max(128)),
    attribution: nullish(
      z.looseObject({
        click_id: nullish(z.string().min(1).max(256)),
        referrer: nullish(z.string().max(2048)),
        referrer_click_ms: nullish(epochMs),
        install_begin_ms: nullish(epochMs),
      }),
    ),
    properties: nullish(
      z
        .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
        .refine((p) => Object.keys(p).length <= MAX_PROPERTIES && Buffer.byteLength(JSON.stringify(p)) <= MAX_PROPERTIES_JSON_BYTES),
    ),
    consent: nullish(
      z.strictObject({
        gdpr_applies: nullish(z.boolean()),
        tcf_string: nullish(z.string().max(MAX_TCF_STRING_CHARS).regex(TCF_STRING_PATTERN)),
        ad_user_data: nullish(z.boolean()),
        ad_personalization: nullish(z.boolean()),
        third_party_sharing: nullish(z.boolean()),
        measurement: nullish(z.boolean()),
      }),
    ),
    transaction_id: nullish(printableId),
  })
  .superRefine((event, ctx) => {
    if (event.event_name === INSTALL_EVENT && (event.platform === undefined || event.platform === null)) {
      ctx.addIssue({ code: 'custom', path: ['platform'], message: 'required on install' });
    }
    const { currency, revenue, revenue_usd } = event as Record<string, unknown>;
    const priced = typeof revenue === 'number' && Number.isFinite(revenue) && revenue >= 0;
    if (
      currency !== undefined &&
      currency !== null &&
      !((revenue_usd === undefined || revenue_usd === null) && priced && isCurrencyCode(currency))
    ) {
      ctx.addIssue({ code: 'custom', path: ['currency'], message: 'an ISO 4217 code with revenue, without revenue_usd' });
    }
    if (event.attribution !== undefined && event.attribution !== null && event.event_name !== INSTALL_EVENT) {
      ctx.addIssue({ code: 'custom', path: ['attribution'], message: 'only on install' });
    }
    const adRevenue = (event as Record<string, unknown>).ad_revenue;
    const ok =
      event.event_name === AD_REVENUE_EVENT
        ? (revenue_usd === undefined || revenue_usd === null) &&
          (currency === undefined || currency === null) &&
          zodAdRevenue.safeParse(adRevenue).success
        : adRevenue === undefined || adRevenue === null;
    if (!ok) ctx.addIssue({ code: 'custom', path: ['ad_revenue'], message: 'required on ad_revenue and only there' });
    const refund = (event as Record<string, unknown>).refund;
    const refundOk =
      event.event_name === REFUND_EVENT
        ? (revenue_usd === undefined || revenue_usd === null) &&
          (currency === undefined || currency === null) &&
          zodRefund.safeParse(refund).success
        : refund === undefined || refund === null;
    if (!refundOk) ctx.addIssue({ code: 'custom', path: ['refund'], message: 'required on refund and only there' });
  });

const reasonByField = new Map<string, RejectionReason>(EVENT_RULES.map((rule) => [rule.field, rule.reason]));
const fieldOrder = EVENT_RULES.map((rule) => rule.field);

/** The zod route to the same answer: parse, then the first failing field in the rules' order. */
export function validateWithZod(entry: unknown, context: BatchContext): RejectionReason | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || !isStorable(entry)) return 'bad_event';
  batch = context;
  const result = zodEvent.safeParse(entry);
  if (result.success) return undefined;
  const failed = new Set(result.error.issues.map((issue) => String(issue.path[0])));
  const field = fieldOrder.find((name) => failed.has(name));
  return field ? reasonByField.get(field) : 'bad_event';
}

export function batchContext(receivedMs: number, skewMs = 0): BatchContext {
  const seen = new Set<string>();
  return { receivedMs, skewMs, claimEventId: (id) => seen.size !== seen.add(id).size };
}

/**
 * A batch as an SDK sends it: mostly good events (a third of them with properties, some
 * installs with attribution), and one in ten broken in one field.
 */
export function sampleBatch(size: number, now: number): unknown[] {
  const breakers: ((e: Record<string, unknown>) => void)[] = [
    (e) => (e.event_id = 'has space'),
    (e) => (e.event_name = ''),
    (e) => (e.install_uuid = 'nope'),
    (e) => (e.ts_ms = now + 10 * MAX_FUTURE_SKEW_MS),
    (e) => (e.revenue_usd = -1),
    (e) => (e.platform = 'web'),
    (e) => (e.device_id = ''),
    (e) => (e.attribution = { click_id: 1 }),
    (e) => (e.properties = { nested: { no: true } }),
    (e) => (e.deep = nest(MAX_EVENT_DEPTH + 2)),
    (e) => (e.ad_revenue = { source: 'max' }),
    (e) => (e.consent = { gdpr_applies: 'yes' }),
    (e) => (e.consent = { tcf_string: 'not a TC string' }),
    (e) => (e.refund = { purchase_event_id: 'p-1', revenue: 0, currency: 'USD' }),
  ];
  return Array.from({ length: size }, (_, i) => {
    const install = i % 10 === 0;
    const event: Record<string, unknown> = {
      event_id: `evt-${i}-${randomUUID().slice(0, 8)}`,
      event_name: install ? 'install' : i % 3 === 0 ? 'purchase' : 'session_start',
      install_uuid: randomUUID(),
      ts_ms: now - (i % 1000) * 1000,
      platform: i % 2 === 0 ? 'ios' : 'android',
    };
    if (install)
      event.attribution = { click_id: `clk_${i}`, referrer: `click_id=clk_${i}&utm_source=partner`, install_begin_ms: now - 5000 };
    if (i % 3 === 0) event.revenue_usd = 4.99;
    if (i % 7 === 3) {
      event.event_name = AD_REVENUE_EVENT;
      delete event.revenue_usd;
      const formats = ['banner', 'interstitial', 'rewarded'];
      event.ad_revenue = {
        source: 'applovin_max',
        network: 'AppLovin',
        format: formats[i % 3],
        placement: null,
        revenue: 0.0001 * (i % 50),
        currency: 'USD',
        precision: 'exact',
        impression_id: `imp-${i}`,
      };
    }
    if (i % 3 === 1) event.properties = { screen: 'home', level: i % 50, premium: i % 2 === 0 };
    if (i % 5 === 0) event.device_id = `device-${i}`;
    if (i % 20 === 0)
      event.consent = {
        gdpr_applies: true,
        tcf_string: 'CQuZP8AQuZP8AAKABAENAyFgAIIAAEAAAAAAPoQAwAAgLzA-gAAAAAAA.IAAA',
        ad_user_data: false,
      };
    if (i % 10 === 7) breakers.at(Math.floor(i / 10) % breakers.length)?.(event);
    return event;
  });
}

function nest(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}
