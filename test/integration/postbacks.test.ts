import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { runCommand } from '../../admin/commands';
import { LinkStore } from '../../functions/adapters/link-store';
import { sendPostback } from '../../functions/adapters/postback-http';
import { s3Client, sqsClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { tcString } from '../support/tcf';
import { sleep, waitFor } from '../support/wait-for';
import { MOBILE } from '../unit/links/user-agents';

// Read by the runtime at start and by the sender at its cold start: a local receiver on
// 127.0.0.1, and retries after a second rather than minutes.
process.env.POSTBACK_ALLOW_LOOPBACK = '1';
process.env.POSTBACK_RETRY_DELAYS_SECONDS = '1,1,1,1';

interface Received {
  path: string;
  query: URLSearchParams;
  raw: string;
  method: string;
  host: string;
  body: string;
}

let stack: LocalStack;
let receiver: Server;
let base: string;
const received: Received[] = [];
const hits = new Map<string, number>();

/** The partners' side: /ok answers 200, /flaky 500 twice per postback then 200, /strict 400, /silent never. */
async function startReceiver(): Promise<Server> {
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://receiver');
      received.push({
        path: url.pathname,
        query: url.searchParams,
        raw: request.url ?? '',
        method: request.method ?? '',
        host: request.headers.host ?? '',
        body,
      });
      const id = url.searchParams.get('id') ?? '';
      const seen = (hits.get(id) ?? 0) + 1;
      hits.set(id, seen);
      if (url.pathname === '/silent') return; // never answers
      if (url.pathname === '/flaky') response.statusCode = seen <= 2 ? 500 : 200;
      else if (url.pathname === '/strict') response.statusCode = 400;
      else response.statusCode = 200;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const target = () => ({ baseUrl: stack.baseUrl });
const MACROS =
  'click={click_id}&link={link_id}&campaign={campaign}&s1={sub1}&s2={sub2}&s3={sub3}&s4={sub4}&s5={sub5}&ev={event_name}&rev={revenue_usd}' +
  '&it={install_time}&et={event_time}&pf={platform}&cc={country}&type={attribution_type}&ctit={ctit_seconds}&re={is_reinstall}&fraud={fraud_reasons}&id={postback_id}';

let network = 0;
const freshIp = () => `198.51.${100 + (++network % 50)}.${network}`;

async function click(linkId: string, ip: string, query: string): Promise<string> {
  const response = await fetch(`${stack.baseUrl}/l/${linkId}?${query}`, {
    redirect: 'manual',
    headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip, 'cloudfront-viewer-country': 'DE' },
  });
  const clickId = new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('click_id');
  if (!clickId) throw new Error(`no click id from the link (status ${response.status})`);
  return clickId;
}

/** An attributed install of a fresh user, 40 s after its click (no fast-CTIT flag), with the events after it. */
async function attributedInstall(
  tenant: Tenant,
  linkId: string,
  query: string,
  installUuid: string,
  events: { name: string; revenue?: number }[] = [],
  consent?: Record<string, unknown>,
) {
  const ip = freshIp();
  const clickId = await click(linkId, ip, query);
  const installTs = Date.now() + 40_000;
  const batch = [
    {
      event_id: 'install-1',
      event_name: 'install',
      install_uuid: installUuid,
      ts_ms: installTs,
      platform: 'ios',
      device_id: `device-${installUuid}`,
      attribution: { click_id: clickId },
      ...(consent ? { consent } : {}),
    },
    ...events.map((e, n) => ({
      event_id: `ev-${n}`,
      event_name: e.name,
      install_uuid: installUuid,
      ts_ms: installTs + (n + 1) * 1000,
      ...(e.revenue ? { revenue_usd: e.revenue } : {}),
    })),
  ];
  const result = await eventClientFrom(stack.baseUrl, tenant, ip).sendEvents(batch as never);
  expect(result.results.every((r) => r.status === 'accepted')).toBe(true);
  return { ip, installTs };
}

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  receiver = await startReceiver();
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await stack.stop();
});

describe('partner postbacks through the local runtime', () => {
  let tenant: Tenant;
  let installUuid: string;

  it('sends one install postback with every macro filled and encoded, and one for a configured event', async () => {
    tenant = await createTenant();
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'acme', campaign: 'spring sale' });
    await runCommand(
      'postback set',
      { 'app-key': tenant.app.app_key, partner: 'acme', url: `${base}/ok?${MACROS}`, events: 'install,purchase' },
      target(),
    );

    installUuid = '5f0c6b9e-1d2a-4c3b-9e8f-0a1b2c3d4e5f';
    const { ip, installTs } = await attributedInstall(
      tenant,
      link.link_id,
      'click_id=abc%20def%26x%3D1&sub1=a%20b&sub2=%C3%BC&sub3=3&sub4=four&sub5=%2F5',
      installUuid,
      [{ name: 'purchase', revenue: 4.99 }, { name: 'level_up' }],
    );
    // An organic install with a purchase: no partner to tell.
    await eventClientFrom(stack.baseUrl, tenant, freshIp()).sendEvents([
      {
        event_id: 'i',
        event_name: 'install',
        install_uuid: '6f0c6b9e-1d2a-4c3b-9e8f-0a1b2c3d4e5f',
        ts_ms: Date.now(),
        platform: 'android',
      },
      { event_id: 'p', event_name: 'purchase', install_uuid: '6f0c6b9e-1d2a-4c3b-9e8f-0a1b2c3d4e5f', ts_ms: Date.now(), revenue_usd: 1 },
    ] as never);
    await stack.pollers.drain();
    await waitFor(() => received.filter((r) => r.path === '/ok').length >= 2, { timeoutMs: 10_000, what: 'two postbacks' });
    await stack.pollers.drain();

    const ok = received.filter((r) => r.path === '/ok');
    expect(ok.map((r) => r.query.get('ev')).sort()).toEqual(['install', 'purchase']);
    const install = ok.find((r) => r.query.get('ev') === 'install')!;
    const q = Object.fromEntries(install.query);
    expect(q).toMatchObject({
      click: 'abc def&x=1',
      link: link.link_id,
      campaign: 'spring sale',
      s1: 'a b',
      s2: 'ü',
      s3: '3',
      s4: 'four',
      s5: '/5',
      ev: 'install',
      rev: '0',
      pf: 'ios',
      cc: 'DE',
      type: 'deterministic',
      re: 'false',
      fraud: '',
    });
    expect(q.id).toMatch(/^[0-9a-f]{32}$/);
    expect(Math.abs(Number(q.it) - installTs)).toBeLessThan(5_000);
    expect(q.et).toBe(q.it);
    expect(Number(q.ctit)).toBeGreaterThanOrEqual(35);
    expect(Number(q.ctit)).toBeLessThanOrEqual(45);
    const purchase = Object.fromEntries(ok.find((r) => r.query.get('ev') === 'purchase')!.query);
    expect(purchase).toMatchObject({ rev: '4.99', click: 'abc def&x=1', it: q.it, type: 'deterministic' });
    expect(Number(purchase.et)).toBeGreaterThan(Number(q.it));
    expect(purchase.id).not.toBe(q.id);
    // Nothing that identifies the person: no install_uuid, device id or client address.
    for (const request of ok) {
      expect(request.raw).not.toContain(installUuid);
      expect(request.raw).not.toContain('device-');
      expect(request.raw).not.toContain(ip);
    }

    const log = (await runCommand('postback log', { 'app-key': tenant.app.app_key }, target())) as {
      attempts: { outcome: string; response_code: number; event_name: string }[];
    };
    expect(log.attempts.map((a) => [a.event_name, a.outcome, a.response_code]).sort()).toEqual([
      ['install', 'delivered', 200],
      ['purchase', 'delivered', 200],
    ]);
  }, 30_000);

  it("sends a postback only where the install's consent allows the partner's TCF vendor, with Google's DMA values", async () => {
    const own = await createTenant();
    const link = await new LinkStore(resourceName.table('links')).create(own.app, { partner: 'gads', campaign: 'eu' });
    await runCommand(
      'postback set',
      {
        'app-key': own.app.app_key,
        partner: 'gads',
        url: `${base}/dma?ev={event_name}&eea={eea}&ap={ad_personalization}&ud={ad_user_data}&id={postback_id}`,
        events: 'install,purchase',
        'tcf-vendor-id': 755,
      },
      target(),
    );
    const allowed = '7a0c6b9e-1d2a-4c3b-9e8f-0a1b2c3d4e5f';
    const refused = '7b0c6b9e-1d2a-4c3b-9e8f-0a1b2c3d4e5f';
    const eu = { gdpr_applies: true, ad_personalization: false, ad_user_data: true };
    await attributedInstall(own, link.link_id, 'click_id=c1', allowed, [{ name: 'purchase', revenue: 2 }], {
      ...eu,
      tcf_string: tcString([755, 91], [1, 7]),
    });
    await attributedInstall(own, link.link_id, 'click_id=c2', refused, [{ name: 'purchase', revenue: 3 }], {
      ...eu,
      tcf_string: tcString([91], [1, 7]),
    });
    await stack.pollers.drain();
    await waitFor(() => received.filter((r) => r.path === '/dma').length >= 2, { timeoutMs: 10_000, what: 'the allowed postbacks' });
    await stack.pollers.drain();

    const dma = received.filter((r) => r.path === '/dma').map((r) => Object.fromEntries(r.query));
    expect(dma.map(({ ev, eea, ap, ud }) => [ev, eea, ap, ud]).sort()).toEqual([
      ['install', '1', '0', '1'],
      ['purchase', '1', '0', '1'],
    ]);
    const log = (await runCommand('postback log', { 'app-key': own.app.app_key }, target())) as {
      attempts: { outcome: string; event_name: string; error?: string }[];
    };
    expect(
      log.attempts
        .filter((a) => a.outcome === 'withheld')
        .map((a) => [a.event_name, a.error])
        .sort(),
    ).toEqual([
      ['install', 'consent: no TCF consent for vendor 755'],
      ['purchase', 'consent: no TCF consent for vendor 755'],
    ]);
    const shown = (await runCommand('install show', { 'app-key': own.app.app_key, 'install-uuid': refused }, target())) as {
      consent: Record<string, unknown>;
    };
    expect(shown.consent).toMatchObject({ ...eu, event_id: 'install-1' });
  }, 30_000);

  it('sends nothing more when the aggregation is delivered again or the rows are rebuilt', async () => {
    const before = received.length;
    const { Contents = [] } = await s3Client().send(new ListObjectsV2Command({ Bucket: resourceName.bucket(), Prefix: 'audit/' }));
    const objects = Contents.filter((object) => object.Key?.includes(tenant.app.app_id));
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) {
      const message = {
        version: 1,
        bucket: resourceName.bucket(),
        audit_key: object.Key,
        company_id: tenant.company.company_id,
        app_id: tenant.app.app_id,
        accepted: 3,
        rejected: 0,
        received_ms: Date.now(),
      };
      await sqsClient().send(
        new SendMessageCommand({ QueueUrl: resourceName.queueUrl('aggregation'), MessageBody: JSON.stringify(message) }),
      );
    }
    const rebuilt = (await runCommand('rebuild', { 'app-key': tenant.app.app_key, apply: true }, target())) as { differences: unknown[] };
    expect(rebuilt.differences).toEqual([]);
    await stack.pollers.drain();
    // A fixed wait, not a poll: it proves that nothing arrives, which only time passing can show.
    await sleep(1500);
    await stack.pollers.drain();
    expect(received.length).toBe(before);
  }, 30_000);

  it('retries a receiver that fails, once it answers; does not retry a 400; gives a silent one to the DLQ after the fifth attempt', async () => {
    const app = await createTenant();
    const links = new LinkStore(resourceName.table('links'));
    const uuids: Record<string, string> = {
      flaky: 'a0000000-0000-4000-8000-000000000001',
      strict: 'a0000000-0000-4000-8000-000000000002',
      silent: 'a0000000-0000-4000-8000-000000000003',
    };
    // Configurations first: the aggregator keeps an app's configurations for up to a minute.
    for (const partner of ['flaky', 'strict', 'silent']) {
      await runCommand('postback set', { 'app-key': app.app.app_key, partner, url: `${base}/${partner}?id={postback_id}` }, target());
    }
    for (const partner of ['flaky', 'strict', 'silent']) {
      const link = await links.create(app.app, { partner });
      await attributedInstall(app, link.link_id, 'click_id=c1', uuids[partner]);
    }
    const dlq = stack.endpoints.dead_letter_queues.postbacks;
    const inDlq = async () => {
      const { Attributes } = await sqsClient().send(
        new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      return Number(Attributes?.ApproximateNumberOfMessages ?? 0);
    };
    // Five attempts of 5 s each with a second between them, plus the move to the DLQ.
    await waitFor(async () => (await inDlq()) === 1 && received.filter((r) => r.path === '/flaky').length === 3, {
      timeoutMs: 60_000,
      what: 'three attempts and the DLQ',
    });

    const byPath = (path: string) => received.filter((r) => r.path === path);
    expect(byPath('/flaky')).toHaveLength(3);
    expect(new Set(byPath('/flaky').map((r) => r.query.get('id'))).size).toBe(1);
    expect(byPath('/strict')).toHaveLength(1);
    expect(byPath('/silent')).toHaveLength(5);

    const log = async (partner: string) =>
      (
        (await runCommand('postback log', { 'app-key': app.app.app_key, partner }, target())) as {
          attempts: { attempt: number; outcome: string; response_code?: number; error?: string }[];
        }
      ).attempts
        .map(({ attempt, outcome, response_code, error }) => ({ attempt, outcome, response_code, error }))
        .sort((a, b) => a.attempt - b.attempt);
    expect(await log('flaky')).toEqual([
      { attempt: 1, outcome: 'retry', response_code: 500, error: 'HTTP 500' },
      { attempt: 2, outcome: 'retry', response_code: 500, error: 'HTTP 500' },
      { attempt: 3, outcome: 'delivered', response_code: 200, error: undefined },
    ]);
    expect(await log('strict')).toEqual([{ attempt: 1, outcome: 'failed', response_code: 400, error: 'HTTP 400: not retried' }]);
    const silent = await log('silent');
    expect(silent.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, 'retry', 'no answer within 5 s'],
      [2, 'retry', 'no answer within 5 s'],
      [3, 'retry', 'no answer within 5 s'],
      [4, 'retry', 'no answer within 5 s'],
      [5, 'dead', 'no answer within 5 s'],
    ]);
  }, 90_000);

  it('refuses templates that point inside the network, or http:// in AWS', async () => {
    const aws = { baseUrl: stack.baseUrl, stack: 'a-deployed-stack' };
    const set = (url: string, where: { baseUrl: string; stack?: string } = aws) =>
      runCommand('postback set', { 'app-key': tenant.app.app_key, partner: 'evil', url }, where);
    await expect(set('https://10.0.0.1/cb?id={postback_id}')).rejects.toThrow(/10\.0\.0\.1, a private address/);
    await expect(set('https://169.254.169.254/latest/meta-data/')).rejects.toThrow(/metadata/);
    await expect(set('https://[::1]/cb')).rejects.toThrow(/loopback/);
    await expect(set('https://localhost/cb')).rejects.toThrow(/localhost resolves to .*loopback/);
    await expect(set(`${base}/ok`)).rejects.toThrow(/only https/);
    await expect(set('https://partner.example/cb?x={install_uuid}')).rejects.toThrow(/unknown macro \{install_uuid\}/);
    // The local runtime started with POSTBACK_ALLOW_LOOPBACK=1 takes 127.0.0.1, still not [::1].
    await expect(set('http://[::1]:9/cb', target())).rejects.toThrow(/loopback/);
    const list = (await runCommand('postback list', { 'app-key': tenant.app.app_key }, target())) as { postbacks: { partner: string }[] };
    expect(list.postbacks.map((p) => p.partner)).toEqual(['acme']);
  });

  it('connects to the address that was checked, whatever the name resolves to', async () => {
    const port = (receiver.address() as AddressInfo).port;
    const result = await sendPostback({
      url: new URL(`http://rebinding.test:${port}/ok?id=pinned`),
      address: { address: '127.0.0.1', family: 4 },
      method: 'GET',
      timeoutMs: 5000,
    });
    expect(result.status).toBe(200);
    expect(received.at(-1)).toMatchObject({ path: '/ok', host: `rebinding.test:${port}` });
  });
});
