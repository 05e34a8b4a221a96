import type { AggregationMessage, AuditBatch } from './types';

/** The hand-off message of a stored audit object: what the aggregator is told to count. */
export function aggregationMessage(
  bucket: string,
  key: string,
  batch: AuditBatch,
  counts: { accepted: number; rejected: number },
  /** The aggregator adds the accepted events to the company's monthly count (ingestion did not). */
  meter = false,
): AggregationMessage {
  return {
    version: 1,
    bucket,
    audit_key: key,
    company_id: batch.companyId,
    app_id: batch.appId,
    accepted: counts.accepted,
    rejected: counts.rejected,
    received_ms: batch.receivedMs,
    ...(meter ? { meter: true as const } : {}),
  };
}
