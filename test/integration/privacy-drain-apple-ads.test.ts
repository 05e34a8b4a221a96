// The privacy drain and Apple's answers (docs/privacy.md, docs/ios.md section 4), over the
// emulators with the grants the stack gives the functions: a deleted install's Apple Ads answers
// leave the answers objects beside its audit objects, another install's answer in the same batch
// stays joined to its own line, and a redelivery of the batch decides that install as before.

import { randomUUID } from 'node:crypto';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { runAdmin } from '../../bin/admin';
import type { SdkEvent } from '../../client/event-client';
import { AdServicesAnswerStore } from '../../functions/adapters/adservices-answers';
import { AuditReader } from '../../functions/adapters/audit-reader';
import { PrivacyReceipts } from '../../functions/adapters/privacy-store';
import { withAnswers } from '../../functions/domain/adservices/token';
import type { DrainReport } from '../../functions/domain/privacy/drain';
import { installHash } from '../../functions/domain/privacy/privacy';
import { s3Client, sqsClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { type AdServicesStub, startAdServicesStub } from '../../local/adservices-stub';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { recordSentMessages, type SentMessage } from '../support/sent-messages';

const MINUTE = 60_000;
const IP = '203.0.113.42';
/** Campaign ids no other string of the run contains. */
const GONE_CAMPAIGN = 802461357;
const KEPT_CAMPAIGN = 470318625;

let stub: AdServicesStub;
let stack: LocalStack;
let tenant: Tenant;
/** Every message sent to a queue, to deliver one again. */
let sent: SentMessage[] = [];
beforeAll(async () => {
  stub = await startAdServicesStub();
  stack = await startLocalStack({ internet: { ADSERVICES_API_URL: stub.url } });
  tenant = await createTenant({ plan: 'paid' });
  sent = recordSentMessages();
}, 60_000);
afterAll(async () => {
  jest.restoreAllMocks();
  await stack?.stop();
  await stub?.close();
});

const installAt = Date.now() - 2 * MINUTE;
const install = (installUuid: string, campaign: number, eventId = 'i'): SdkEvent => ({
  event_id: eventId,
  event_name: 'install',
  install_uuid: installUuid,
  ts_ms: installAt,
  platform: 'ios',
  attribution: { adservices_token: `stub-true-${campaign}-${installAt - 30 * MINUTE}` },
});
const show = async (installUuid: string) =>
  (
    (await runAdmin(['install', 'show', '--app-key', tenant.app.app_key, '--install-uuid', installUuid])) as {
      installs: Record<string, unknown>[];
    }
  ).installs;
/** Read when the stack has set the environment. */
const answers = {
  get: (auditKey: string) => new AdServicesAnswerStore(resourceName.bucket()).get(auditKey),
};

async function auditBucketText(): Promise<string> {
  const { Contents = [] } = await s3Client().send(new ListObjectsV2Command({ Bucket: resourceName.bucket() }));
  const reader = new AuditReader(resourceName.bucket());
  const texts: string[] = [];
  for (const { Key } of Contents) {
    if (!Key?.startsWith('audit/')) continue;
    texts.push(
      Key,
      Key.endsWith('.adservices.json')
        ? JSON.stringify(await answers.get(Key.slice(0, -'.adservices.json'.length)))
        : JSON.stringify(await reader.lines(Key)),
    );
  }
  return texts.join('\n');
}

describe('the privacy drain and Apple Ads answers', () => {
  it("takes the deleted install's answers out, keeps the other install's matched to its own line", async () => {
    const [gone, kept] = [randomUUID(), randomUUID()];
    // A batch of both installs (the deleted one first, so the other's line is not line 0), and a
    // second send of the deleted install's install event, in an object of its own.
    const shared = await eventClientFrom(stack.baseUrl, tenant, IP).sendEvents([
      install(gone, GONE_CAMPAIGN),
      install(kept, KEPT_CAMPAIGN, 'i-kept'),
    ]);
    const alone = await eventClientFrom(stack.baseUrl, tenant, IP).sendEvents([install(gone, GONE_CAMPAIGN, 'i-again')]);
    await stack.pollers.drain();
    expect((await answers.get(shared.audit_key))?.answers.map((answer) => [answer.index, answer.apple_ads?.campaign_id])).toEqual([
      [0, GONE_CAMPAIGN],
      [1, KEPT_CAMPAIGN],
    ]);
    expect(await answers.get(alone.audit_key)).toBeDefined();
    expect(await auditBucketText()).toContain(String(GONE_CAMPAIGN));
    expect((await show(kept))[0]).toMatchObject({ partner: 'apple_search_ads', campaign: String(KEPT_CAMPAIGN) });
    const requests = stub.requests();

    await eventClientFrom(stack.baseUrl, tenant, IP).deleteInstall(gone);
    const report = (await stack.scheduler.run('privacy-drain')) as DrainReport;
    expect(report).toMatchObject({ failed: [], stopped: 'queue_empty' });
    expect(report.done).toHaveLength(1);

    // The shared object's answers hold the other install's only, under the index its line keeps.
    const lines = await new AuditReader(resourceName.bucket()).lines(shared.audit_key);
    const left = await answers.get(shared.audit_key);
    expect(left?.answers.map((answer) => answer.index)).toEqual([1]);
    expect(withAnswers(lines, left!).map((line) => [line.install_uuid, line.adservices?.apple_ads?.campaign_id])).toEqual([
      [kept, KEPT_CAMPAIGN],
    ]);
    // The object of the deleted install only is gone, and its answers with it.
    expect(await answers.get(alone.audit_key)).toBeUndefined();
    // No Apple id of the deleted install anywhere in the audit bucket.
    expect(await auditBucketText()).not.toContain(String(GONE_CAMPAIGN));
    const receipts = await new PrivacyReceipts(resourceName.table('privacy_requests')).ofInstall(tenant.app.app_id, installHash(gone));
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({
      state: 'done',
      deleted_adservices_answers: 2,
      deleted_audit_objects_deleted: 1,
      deleted_audit_objects_rewritten: 1,
    });

    // The shared batch delivered again (enrichment, then the aggregator's join): Apple is not asked,
    // and the other install is decided as before.
    await sqsClient().send(
      new SendMessageCommand({
        QueueUrl: resourceName.queueUrl('enrichment'),
        MessageBody: JSON.stringify(
          sent.find((entry) => entry.queue.includes('enrichment') && entry.message.audit_key === shared.audit_key)?.message,
        ),
      }),
    );
    const forwarded = sent.length;
    await stack.pollers.drain();
    // Handed on to the aggregator, which read the rewritten object and answers (a missing answers object would be poison).
    expect(sent.slice(forwarded).map((entry) => [entry.queue, entry.message.audit_key])).toEqual([
      [expect.stringContaining('aggregation'), shared.audit_key],
    ]);
    expect(stub.requests()).toBe(requests);
    expect((await show(kept))[0]).toMatchObject({ partner: 'apple_search_ads', campaign: String(KEPT_CAMPAIGN) });
    expect(await show(gone)).toEqual([]);
  }, 90_000);
});
