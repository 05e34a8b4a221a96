import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { AuditStore } from '../../functions/adapters/audit-store';
import { LANES } from '../../functions/domain/aggregation/lease';
import { auditKey } from '../../functions/domain/audit/keys';
import { aggregationMessage } from '../../functions/domain/audit/message';
import { auditRecord } from '../../functions/domain/audit/record';
import { sha256Hex } from '../../functions/domain/common/hashing';
import { judgeEvents } from '../../functions/domain/ingest/event-validation';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import type { Tenant } from './local-stack';

/**
 * Deliveries the tests hand the aggregator handler themselves (the runtime's poller stopped or
 * bypassed): audit objects stored as POST /event stores them, their queue messages as an SQS event,
 * and a dead invocation's lane leases run out.
 */

/** Audit objects written as POST /event writes them, with the messages it would send, for deliveries the test controls. */
export async function stored(tenant: Tenant, batches: readonly object[][], receivedMs: number): Promise<string[]> {
  const bodies: string[] = [];
  const audit = new AuditStore(resourceName.bucket());
  for (const [n, events] of batches.entries()) {
    const batch = {
      companyId: tenant.company.company_id,
      appId: tenant.app.app_id,
      receivedMs: receivedMs + n,
      bodySha256: sha256Hex(`${tenant.app.app_id}:${receivedMs}:${n}`),
      clientIp: '198.51.100.20',
    };
    const { verdicts, accepted, rejected } = judgeEvents(events, receivedMs + n, receivedMs + n);
    const key = auditKey(batch);
    await audit.putBatch(key, batch, auditRecord(events, verdicts, batch));
    bodies.push(JSON.stringify(aggregationMessage(audit.bucket, key, batch, { accepted, rejected })));
  }
  return bodies;
}

/** What a dead invocation's lane leases do once they run out: free (set here rather than waited for). */
export async function freeLanes(): Promise<void> {
  await Promise.all(
    Array.from({ length: LANES }, (_, lane) =>
      dynamoClient()
        .send(
          new UpdateCommand({
            TableName: resourceName.table('ledger'),
            Key: { pk: `lane#${lane}` },
            UpdateExpression: 'SET lease_until = :zero',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':zero': 0 },
          }),
        )
        .catch(() => undefined),
    ),
  );
}

export const sqsEvent = (bodies: readonly string[], tag = ''): SQSEvent => ({
  Records: bodies.map((body, i) => ({
    messageId: `${tag}m${i}`,
    receiptHandle: `r${i}`,
    body,
    attributes: {} as never,
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn',
    awsRegion: 'us-east-1',
  })),
});
