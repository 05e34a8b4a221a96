import type { AuditFx } from '../audit/types';
import { dayOf } from '../common/days';
import { isPlainObject } from '../common/json';
import {
  BAD_CONVERTED_REVENUE,
  BAD_CURRENCY,
  type BatchVerdict,
  type EventFault,
  type EventVerdict,
  MAX_REVENUE_USD,
} from '../ingest/event-validation';
import { convertToUsd, type FxRateStore, readRatesFor } from './rates';

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

/**
 * The second half of the currency rule (docs/ingestion.md, "Currencies"): each accepted event
 * with a `currency` (validateEvent checked its form) converted at the rate of its corrected UTC
 * day, else the latest earlier within 7 days. No rate, or more than MAX_REVENUE_USD once
 * converted: the event is rejected bad_currency after all. The store is read once, for the windows
 * of those events' days, and only when there is one: a batch without currencies reads nothing.
 */
export async function convertRevenue(store: FxRateStore, events: readonly unknown[], judged: BatchVerdict): Promise<ConvertedBatch> {
  const priced: { index: number; amount: number; currency: string; day: string }[] = [];
  for (const verdict of judged.verdicts) {
    if (verdict.status !== 'accepted' || verdict.corrected_ts === undefined) continue;
    const event = events[verdict.index];
    if (!isPlainObject(event)) continue;
    const currency = event.currency;
    if (typeof currency !== 'string') continue;
    priced.push({ index: verdict.index, amount: event.revenue as number, currency, day: dayOf(verdict.corrected_ts) });
  }
  if (priced.length === 0) return { ...judged, conversions: NONE };

  const rates = await readRatesFor(
    store,
    priced.map(({ day }) => day),
  );
  const conversions = new Map<number, RevenueConversion>();
  const refused = new Map<number, EventFault>();
  for (const { index, amount, currency, day } of priced) {
    const conversion = convertToUsd(rates, amount, currency, day);
    if (conversion === undefined) refused.set(index, BAD_CURRENCY);
    else if (conversion.usd > MAX_REVENUE_USD) refused.set(index, BAD_CONVERTED_REVENUE);
    else
      conversions.set(index, {
        revenueUsd: conversion.usd,
        fx: { currency, amount, rate: conversion.rate, rate_day: conversion.rate_day },
      });
  }
  if (refused.size === 0) return { ...judged, conversions };
  const verdicts = judged.verdicts.map((verdict): EventVerdict => {
    const fault = refused.get(verdict.index);
    return fault === undefined ? verdict : { ...verdict, status: 'rejected', reason: fault.reason, field: fault.field };
  });
  return { verdicts, accepted: judged.accepted - refused.size, rejected: judged.rejected + refused.size, conversions };
}
