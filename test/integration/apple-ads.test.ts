// Apple Ads through AdServices tokens, end to end on the local runtime (docs/ios.md, section 4):
// POST /event with install events carrying tokens, the enrichment queue and adservices-enrich
// under their grants asking a stub of Apple's attribution API on 127.0.0.1 (local/adservices-stub.ts,
// the one npm start runs), the answers stored beside the audit object, the aggregator deciding
// with them; `admin install show`, the attribution and performance reports read the outcome.

import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { runAdmin } from '../../bin/admin';
import type { SdkEvent } from '../../client/event-client';
import { AdServicesAnswerStore } from '../../functions/adapters/adservices-answers';
import { ClickStore } from '../../functions/adapters/click-store';
import { newClickId } from '../../functions/domain/links/click-log-key';
import { clickTables } from '../../functions/shared/click-tables';
import { sqsClient } from '../../functions/shared/clients/sqs';
import { resourceName } from '../../functions/shared/config';
import { type AdServicesStub, STUB_ORG_ID, startAdServicesStub } from '../../local/adservices-stub';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { captureLogs, type LogCapture } from '../support/log-capture';
import { recordSentMessages, type SentMessage } from '../support/sent-messages';

const MINUTE = 60_000;
const DAY = 86_400_000;
const IP = '203.0.113.24';
/** Campaign ids no other string of the run contains, so the log check means something. */
const CAMPAIGN = 542370539;
const RETRIED_CAMPAIGN = 918273645;
const LOST_CAMPAIGN = 613572468;
const WON_CAMPAIGN = 735146282;

let stub: AdServicesStub;
let stack: LocalStack;
let tenant: Tenant;
let logs: LogCapture;
/** Every token the run sends: none may appear in a log line. */
const tokens: string[] = [];
/** The queue each hand-off and forward went to, by audit key. */
let sent: SentMessage[] = [];
const now = Date.now();
const installAt = now - 2 * MINUTE;

beforeAll(async () => {
  // Every log line the functions can write, info and debug included.
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
  logs = captureLogs();
  stub = await startAdServicesStub();
  stack = await startLocalStack({ internet: { ADSERVICES_API_URL: stub.url } });
  tenant = await createTenant({ plan: 'paid' });
  sent = recordSentMessages();
}, 60_000);

afterAll(async () => {
  jest.restoreAllMocks();
  logs?.restore();
  delete process.env.POWERTOOLS_LOG_LEVEL;
  await stack?.stop();
  await stub?.close();
});

const install = (attribution: SdkEvent['attribution']): SdkEvent => ({
  event_id: `install-${randomUUID()}`,
  event_name: 'install',
  install_uuid: randomUUID(),
  ts_ms: installAt,
  platform: 'ios',
  attribution,
});
const withToken = (token: string, attribution: SdkEvent['attribution'] = {}): SdkEvent => {
  tokens.push(token);
  return install({ ...attribution, adservices_token: token });
};
const show = (event: SdkEvent) =>
  runAdmin(['install', 'show', '--app-key', tenant.app.app_key, '--install-uuid', event.install_uuid]) as Promise<{
    installs: Record<string, unknown>[];
  }>;
const report = async (path: string, query = '') => {
  const response = await fetch(`${stack.baseUrl}/api/v1/reports/${path}?since_ms=${now - DAY}&until_ms=${now + DAY}${query}`, {
    headers: { authorization: `Bearer ${tenant.serverKey}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { rows: Record<string, unknown>[] }).rows;
};
const queueOf = (auditKey: string) => sent.filter((entry) => entry.message.audit_key === auditKey).map((entry) => entry.queue);

/** A click of a tracking link of the app, recorded as the redirect records it. */
async function linkClick(tsMs: number): Promise<string> {
  const clickId = newClickId({ tsMs, appIpPlatform: `${tenant.app.app_id}#${IP}#ios` });
  await new ClickStore(clickTables()).record({
    click_id: clickId,
    link_id: 'lnk-apple-ads-test',
    app_id: tenant.app.app_id,
    company_id: tenant.company.company_id,
    partner: 'meta',
    campaign: 'spring',
    ip: IP,
    ip_block: '203.0.113.0/24',
    user_agent: 'test',
    platform: 'ios',
    ts_ms: tsMs,
    app_ip_platform: `${tenant.app.app_id}#${IP}#ios`,
    lookback_days: 7,
    expires_at: Math.floor(tsMs / 1000) + 7 * 86_400,
  });
  return clickId;
}

describe('Apple Ads installs', () => {
  const claimed = withToken(`stub-true-${CAMPAIGN}-${installAt - 30 * MINUTE}`);
  const notClaimed = withToken('stub-false');
  const retried = withToken(`stub-404x2-stub-true-${RETRIED_CAMPAIGN}-${installAt - 20 * MINUTE}`);
  const badToken = withToken('stub-400');
  let auditKey: string;

  it('are attributed from the answers Apple gives: true to apple_search_ads with its campaign, false and 400 left organic, 404 twice then 200 still attributed', async () => {
    const answer = await eventClientFrom(stack.baseUrl, tenant, IP).sendEvents([claimed, notClaimed, retried, badToken]);
    expect(answer).toMatchObject({ accepted: 4, rejected: 0 });
    auditKey = answer.audit_key;
    await stack.pollers.drain();

    // One request for each token, three for the one Apple was not ready for.
    expect(stub.requests()).toBe(6);
    expect(stub.requests(retried.attribution?.adservices_token)).toBe(3);
    expect(queueOf(auditKey)).toEqual([expect.stringContaining('enrichment'), expect.stringContaining('aggregation')]);
    expect(sent.find((entry) => entry.queue.includes('aggregation') && entry.message.audit_key === auditKey)?.message).toMatchObject({
      enriched: true,
    });

    const [claimedShow] = (await show(claimed)).installs;
    expect(claimedShow).toMatchObject({
      partner: 'apple_search_ads',
      attribution_type: 'deterministic',
      rule: 'adservices_token',
      campaign: String(CAMPAIGN),
      adservices: 'attributed',
      apple_ads: {
        campaign_id: CAMPAIGN,
        ad_group_id: CAMPAIGN + 1,
        keyword_id: CAMPAIGN + 2,
        ad_id: CAMPAIGN + 3,
        org_id: STUB_ORG_ID,
        country_or_region: 'US',
        click_ms: installAt - 30 * MINUTE,
      },
    });
    expect((await show(retried)).installs[0]).toMatchObject({ partner: 'apple_search_ads', campaign: String(RETRIED_CAMPAIGN) });
    expect((await show(notClaimed)).installs[0]).toMatchObject({ partner: 'organic', adservices: 'not_attributed' });
    expect((await show(badToken)).installs[0]).toMatchObject({ partner: 'organic', adservices: 'bad_token' });
    expect((await show(badToken)).installs[0]).not.toHaveProperty('apple_ads');

    const attribution = await report('attribution');
    expect(attribution.map((row) => [row.partner, row.attribution_type, row.installs])).toEqual(
      expect.arrayContaining([
        ['apple_search_ads', 'deterministic', 2],
        ['organic', 'organic', 2],
      ]),
    );
    const byCampaign = await report('performance', '&group_by=partner,campaign');
    expect(byCampaign.filter((row) => row.partner === 'apple_search_ads').map((row) => [row.campaign, row.installs])).toEqual(
      expect.arrayContaining([
        [String(CAMPAIGN), 1],
        [String(RETRIED_CAMPAIGN), 1],
      ]),
    );
  }, 60_000);

  it('calls Apple no more when the batch is delivered again, and counts it once', async () => {
    const before = await report('attribution');
    const answers = await new AdServicesAnswerStore(resourceName.bucket()).get(auditKey);
    expect(answers?.answers.map((answer) => answer.outcome)).toEqual(['attributed', 'not_attributed', 'attributed', 'bad_token']);
    const message = sent.find((entry) => entry.queue.includes('enrichment') && entry.message.audit_key === auditKey)?.message;
    await sqsClient().send(new SendMessageCommand({ QueueUrl: resourceName.queueUrl('enrichment'), MessageBody: JSON.stringify(message) }));
    await stack.pollers.drain();

    expect(stub.requests()).toBe(6);
    expect(queueOf(auditKey).filter((queue) => queue.includes('aggregation'))).toHaveLength(2);
    expect(await report('attribution')).toEqual(before);
  }, 60_000);
});

describe('an Apple Ads claim and a tracking-link click', () => {
  it('go to the later click: a later tracking-link click wins, an earlier one loses', async () => {
    const lost = withToken(`stub-true-${LOST_CAMPAIGN}-${installAt - 30 * MINUTE}`, { click_id: await linkClick(installAt - 10 * MINUTE) });
    const earlierClick = await linkClick(installAt - 60 * MINUTE);
    const won = withToken(`stub-true-${WON_CAMPAIGN}-${installAt - 30 * MINUTE}`, { click_id: earlierClick });
    await eventClientFrom(stack.baseUrl, tenant, IP).sendEvents([lost, won]);
    await stack.pollers.drain();

    expect((await show(lost)).installs[0]).toMatchObject({
      partner: 'meta',
      rule: 'click_id',
      campaign: 'spring',
      adservices: 'attributed',
      apple_ads: { campaign_id: LOST_CAMPAIGN },
    });
    expect((await show(won)).installs[0]).toMatchObject({ partner: 'apple_search_ads', campaign: String(WON_CAMPAIGN) });
  }, 60_000);
});

describe('batches without a token', () => {
  it('never go through the enrichment queue, nor ask Apple', async () => {
    const requests = stub.requests();
    const answer = await eventClientFrom(stack.baseUrl, tenant, IP).sendEvents([install({}), install(undefined)]);
    await stack.pollers.drain();
    expect(queueOf(answer.audit_key)).toEqual([expect.stringContaining('aggregation')]);
    expect(stub.requests()).toBe(requests);
  }, 60_000);
});

describe('the log', () => {
  it('holds no token, answer or Apple id in any line', () => {
    const lines = logs.lines();
    // The functions did log (the check is not vacuous).
    expect(lines.some((line) => line.includes('aggregat'))).toBe(true);
    const secrets = [
      ...tokens,
      ...[CAMPAIGN, RETRIED_CAMPAIGN, LOST_CAMPAIGN, WON_CAMPAIGN].flatMap((id) => [id, id + 1, id + 2, id + 3].map(String)),
      String(STUB_ORG_ID),
    ];
    expect(lines.filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([]);
    expect(lines.filter((line) => /attribution"?\s*:\s*(true|false)|countryOrRegion|clickDate/.test(line))).toEqual([]);
  });
});
