import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { HEALTH_PROBE_KEY } from '../../lib/function-constants';
import type { QueueName } from '../../lib/manifest';
import type { Binding, Probe } from '../domain/health/health';
import { dynamoClient } from '../shared/clients/dynamo';
import { s3Client } from '../shared/clients/s3';
import { sqsClient } from '../shared/clients/sqs';
import { resourceName } from '../shared/config';

/**
 * relational_store: the tenants table (companies, apps, keys: the service's relational data).
 * key_value_store: the counters table (atomic counters read on every batch).
 * object_store: the audit bucket. queues: every queue of the manifest.
 * Each probe is a single read that changes nothing, and all the health functions may do (the
 * manifest's 'probe' level): GetItem of HEALTH_PROBE_KEY, which no item has, and HeadBucket.
 */
/**
 * Every queue of the manifest, typed by QueueName so that a queue added there does not compile
 * until it is probed here; a record, not the manifest's queues, which would bring their purposes
 * into the bundle (lib/function-constants.ts).
 */
const PROBED_QUEUES: Record<QueueName, true> = { aggregation: true, enrichment: true, privacy: true, postbacks: true };

export function healthProbes(): Record<Binding, Probe> {
  const tenants = resourceName.table('tenants');
  const counters = resourceName.table('counters');
  const bucket = resourceName.bucket();
  const queueUrls = (Object.keys(PROBED_QUEUES) as QueueName[]).map((name) => resourceName.queueUrl(name));
  const readItem = (TableName: string, signal: AbortSignal) =>
    dynamoClient().send(new GetCommand({ TableName, Key: { pk: HEALTH_PROBE_KEY } }), { abortSignal: signal });
  return {
    relational_store: (signal) => readItem(tenants, signal),
    key_value_store: (signal) => readItem(counters, signal),
    object_store: (signal) => s3Client().send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: signal }),
    queues: (signal) =>
      Promise.all(
        queueUrls.map((QueueUrl) =>
          sqsClient().send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }), {
            abortSignal: signal,
          }),
        ),
      ),
  };
}
