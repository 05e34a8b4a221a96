import type { AuditFx } from '../audit/types';
import { dayOf } from '../common/days';
import { isPlainObject } from '../common/json';
import {
  adRevenueOf,
  BAD_AD_AMOUNT,
  BAD_AD_CURRENCY_RATE,
  BAD_CONVERTED_REVENUE,
  BAD_CURRENCY,
  BAD_REFUND_AMOUNT,
  BAD_REFUND_CURRENCY_RATE,
  type BatchVerdict,
  type EventFault,
  type EventVerdict,
  MAX_AD_REVENUE_USD,
  MAX_REVENUE_USD,
  refundOf,
} from '../ingest/event-validation';
import { convertToUsd, type FxRateStore, type FxTable, readRatesFor, USD } from './rates';

/** A converted event: the dollars the aggregator counts (the stored event's revenue_usd) and how. */
export interface RevenueConversion {
  readonly revenueUsd: number;
  readonly fx: AuditFx;
}

/** The batch's verdicts after conversion, and each converted event's conversion by its index in the batch. */
export interface ConvertedBatch extends BatchVerdict {
  readonly conversions: ReadonlyMap<number, RevenueConversion>;
}

const NONE: ReadonlyMap<number, RevenueConversion> = new Map();
const NO_RATES: FxTable = new Map();

/** The distinct days of the events that need a rate (not USD's). */
const pricedDays = (priced: readonly { currency: string; day: string }[]) =>
  new Set(priced.filter(({ currency }) => currency !== USD).map(({ day }) => day));

/** What is converted: a purchase's revenue, an impression's, a refund's amount; each with its cap and faults. */
type PricedKind = 'purchase' | 'ad' | 'refund';
const PRICED_RULES: Readonly<Record<PricedKind, { maxUsd: number; noRate: EventFault; tooMuch: EventFault }>> = {
  purchase: { maxUsd: MAX_REVENUE_USD, noRate: BAD_CURRENCY, tooMuch: BAD_CONVERTED_REVENUE },
  ad: { maxUsd: MAX_AD_REVENUE_USD, noRate: BAD_AD_CURRENCY_RATE, tooMuch: BAD_AD_AMOUNT },
  refund: { maxUsd: MAX_REVENUE_USD, noRate: BAD_REFUND_CURRENCY_RATE, tooMuch: BAD_REFUND_AMOUNT },
};

/**
 * The second half of the currency rule (docs/ingestion.md, "Currencies"): each accepted event
 * with a `currency` (validateEvent checked its form) converted at the rate of its corrected UTC
 * day, else the latest earlier within 7 days. No rate, or more than MAX_REVENUE_USD once
 * converted: the event is rejected bad_currency after all. An ad_revenue event's impression is
 * converted the same way from its `ad_revenue.revenue` and `ad_revenue.currency`, its cap being
 * MAX_AD_REVENUE_USD (bad_ad_revenue above it); its dollars are stored as the event's revenue_usd
 * all the same, and the aggregator tells them from a purchase's by the event's name. A refund
 * event's amount (`refund.revenue` in `refund.currency`) likewise, to at most MAX_REVENUE_USD
 * (bad_refund above it; docs/ingestion.md, "Refunds"). The store is read once, for the windows of
 * those events' days, and only when there is one in a currency other than USD (always 1): a batch
 * without such currencies reads nothing, and its days are only worked out for its priced events
 * (the hot path: an ad_revenue impression is usually in USD).
 */
export async function convertRevenue(store: FxRateStore, events: readonly unknown[], judged: BatchVerdict): Promise<ConvertedBatch> {
  const priced: { index: number; amount: number; currency: string; day: string; kind: PricedKind }[] = [];
  let needsRates = false;
  // Only the events the judge saw with an amount in a currency, when it says which.
  const indexes = judged.priced;
  const count = indexes?.length ?? judged.verdicts.length;
  for (let k = 0; k < count; k++) {
    const verdict = judged.verdicts[indexes === undefined ? k : (indexes[k] ?? -1)];
    if (verdict === undefined || verdict.status !== 'accepted' || verdict.corrected_ts === undefined) continue;
    const event = events[verdict.index];
    if (!isPlainObject(event)) continue;
    const impression = adRevenueOf(event);
    const refund = impression === undefined ? refundOf(event) : undefined;
    const kind: PricedKind = impression !== undefined ? 'ad' : refund !== undefined ? 'refund' : 'purchase';
    const currency = impression?.currency ?? refund?.currency ?? event.currency;
    if (typeof currency !== 'string') continue;
    const amount = impression?.amount ?? refund?.amount ?? (event.revenue as number);
    priced.push({ index: verdict.index, amount, currency, day: dayOf(verdict.corrected_ts), kind });
    if (currency !== USD) needsRates = true;
  }
  if (priced.length === 0) return { verdicts: judged.verdicts, accepted: judged.accepted, rejected: judged.rejected, conversions: NONE };

  const rates = needsRates ? await readRatesFor(store, pricedDays(priced)) : NO_RATES;
  const conversions = new Map<number, RevenueConversion>();
  const refused = new Map<number, EventFault>();
  for (const { index, amount, currency, day, kind } of priced) {
    const conversion = convertToUsd(rates, amount, currency, day);
    const rule = PRICED_RULES[kind];
    if (conversion === undefined) refused.set(index, rule.noRate);
    else if (conversion.usd > rule.maxUsd) refused.set(index, rule.tooMuch);
    else
      conversions.set(index, {
        revenueUsd: conversion.usd,
        fx: { currency, amount, rate: conversion.rate, rate_day: conversion.rate_day },
      });
  }
  if (refused.size === 0) return { verdicts: judged.verdicts, accepted: judged.accepted, rejected: judged.rejected, conversions };
  const verdicts = judged.verdicts.map((verdict): EventVerdict => {
    const fault = refused.get(verdict.index);
    return fault === undefined ? verdict : { ...verdict, status: 'rejected', reason: fault.reason, field: fault.field };
  });
  return { verdicts, accepted: judged.accepted - refused.size, rejected: judged.rejected + refused.size, conversions };
}
