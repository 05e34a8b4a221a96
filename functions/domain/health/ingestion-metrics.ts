import type { RejectionReason } from '../ingest/event-validation';

/**
 * The metrics ingest publishes for each batch, which the operators' health view reads back per
 * hour (CloudWatch in AWS, the local runtime's recorder locally): events accepted, events
 * rejected, and events rejected for each reason. A metric per reason, not a dimension: a reason
 * that never happens costs nothing, and the view asks for each one by name.
 */
export const EVENTS_ACCEPTED = 'EventsAccepted';
export const EVENTS_REJECTED = 'EventsRejected';
export const rejectedMetric = (reason: RejectionReason): string => `EventsRejected_${reason}`;

/** Every reason, typed so that a reason added to RejectionReason does not compile until it is here. */
const REASONS: Record<RejectionReason, true> = {
  bad_event: true,
  bad_event_id: true,
  bad_event_name: true,
  bad_install_uuid: true,
  bad_timestamp: true,
  bad_revenue: true,
  bad_currency: true,
  bad_platform: true,
  bad_device_id: true,
  bad_attribution: true,
  bad_properties: true,
  bad_ad_revenue: true,
  bad_consent: true,
  bad_transaction_id: true,
  bad_refund: true,
};
export const REJECTION_REASONS = Object.keys(REASONS) as RejectionReason[];

/** How many events of a batch's verdicts were rejected for each reason (reasons with none left out). */
export function rejectionsByReason(verdicts: readonly { status: string; reason?: RejectionReason }[]): Map<RejectionReason, number> {
  const counts = new Map<RejectionReason, number>();
  for (const { status, reason } of verdicts) if (status === 'rejected' && reason) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return counts;
}
