import { isPlainObject } from '../common/json';
import { AD_REVENUE_EVENT, REFUND_EVENT } from '../ingest/event-validation';
import { claimSeqOf, type ObjectClaims, type PaidPurchase, type RefundClaim } from './install-state';

/**
 * Refunds (issue 40, item 6; docs/analytics.md, "Refunds"). A refund takes back dollars of one
 * purchase of its install, never more than that purchase counted: the sum of the refunds counted
 * against a purchase stays at most its revenue. What each refund counts is read from the install's
 * claim log alone, which holds each purchase's revenue (`paid`) and each refund's request
 * (`refunds`) in the order the log took them, and whose items never change once written: every
 * delivery of an object, at once or later, crashed or not, reads the same items before its own and
 * so counts the same. A refund counts against a purchase of an earlier item or of its own item
 * (purchases of an item come before its refunds); one naming no such purchase (unknown, of another
 * install, or arriving before it) counts nothing, and is not held for a purchase that may follow:
 * the log is read only up to the refund's own item, so a later purchase cannot change it.
 */

/** What the claim log records of an accepted event for refunds: the purchase a refund names, a purchase's transaction id. */
export interface RefundFacts {
  /** On a refund: `e:<purchase_event_id>`, else `t:<transaction_id>` (the event id wins when both are given). */
  readonly refundOf?: string;
  /** On an event with revenue: the store transaction id it carried, which a refund may name. */
  readonly transactionId?: string;
}

/** The refund facts of a stored event (validateEvent checked the fields' forms). */
export function refundFactsOf(event: Record<string, unknown>): RefundFacts {
  if (event.event_name === REFUND_EVENT) {
    const refund = event.refund;
    if (!isPlainObject(refund)) return {};
    if (typeof refund.purchase_event_id === 'string') return { refundOf: `e:${refund.purchase_event_id}` };
    return typeof refund.transaction_id === 'string' ? { refundOf: `t:${refund.transaction_id}` } : {};
  }
  return typeof event.transaction_id === 'string' ? { transactionId: event.transaction_id } : {};
}

/** An event a log item takes, as far as refunds need it. */
export interface MoneyEvent extends RefundFacts {
  readonly eventId: string;
  readonly name: string;
  readonly revenueMicros: number;
}

/** A purchase, as the revenue report and the performance report count one: revenue, neither ad revenue nor a refund. */
export const isPurchase = (event: Pick<MoneyEvent, 'name' | 'revenueMicros'>): boolean =>
  event.revenueMicros > 0 && event.name !== AD_REVENUE_EVENT && event.name !== REFUND_EVENT;

/** The `paid` and `refunds` members of a log item taking these events (none when it takes neither kind). */
export function moneyOf(events: readonly MoneyEvent[]): Pick<ObjectClaims, 'paid' | 'refunds'> {
  const paid: PaidPurchase[] = [];
  const refunds: RefundClaim[] = [];
  for (const event of events) {
    if (event.name === REFUND_EVENT) {
      if (event.refundOf !== undefined) refunds.push([event.eventId, event.refundOf, event.revenueMicros]);
    } else if (isPurchase(event)) paid.push([event.eventId, event.revenueMicros, event.transactionId ?? null]);
  }
  return { ...(paid.length > 0 ? { paid } : {}), ...(refunds.length > 0 ? { refunds } : {}) };
}

/**
 * The micro-dollars the refund `eventId` of log item `seq` counts, given the install's log items
 * up to it at least (later ones are ignored): its request, capped by what its purchase has left
 * after the refunds before it in log order; 0 when it names no purchase taken by then. A purchase
 * is known by its event id and by its transaction id (the first purchase to carry one).
 */
export function refundCounted(items: Iterable<Pick<ObjectClaims, 'sk' | 'paid' | 'refunds'>>, eventId: string, seq: number): number {
  const upTo = [...items].filter((item) => claimSeqOf(item.sk) <= seq).sort((a, b) => claimSeqOf(a.sk) - claimSeqOf(b.sk));
  const left = new Map<string, { micros: number }>();
  for (const item of upTo) {
    for (const [id, micros, transactionId] of item.paid ?? []) {
      const purchase = { micros };
      if (!left.has(`e:${id}`)) left.set(`e:${id}`, purchase);
      if (transactionId !== null && !left.has(`t:${transactionId}`)) left.set(`t:${transactionId}`, purchase);
    }
    for (const [id, named, micros] of item.refunds ?? []) {
      const purchase = left.get(named);
      const counted = purchase ? Math.min(micros, purchase.micros) : 0;
      if (purchase) purchase.micros -= counted;
      if (id === eventId && claimSeqOf(item.sk) === seq) return counted;
    }
  }
  return 0;
}
