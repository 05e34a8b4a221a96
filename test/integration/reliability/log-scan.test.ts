// Every log line of a full run scanned for secrets: the handlers' logs at DEBUG and their EMF
// metrics, the runtime's own errors, everything written to stdout, stderr or the console, while
// the run goes through every route (accepted, refused and failing), the queue consumers, the
// nightly drain, the health check and the admin commands. No line may hold a company, app or
// server key, a signing secret, a signature or bearer token that was sent, or the origin secret.

import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { runAdmin } from '../../../bin/admin';
import { signedRequest } from '../../../client/event-client';
import { dynamoClient } from '../../../functions/shared/clients';
import { LOCAL_ORIGIN_SECRET_VARIABLE } from '../../../local/origin-secret';
import { type HttpCall, httpCall } from '../../support/documented-answers';
import { type LocalStack, startLocalStack } from '../../support/local-stack';
import { captureLogs, type LogCapture } from '../../support/log-capture';
import { countingWrites } from '../../support/write-faults';
import { MOBILE } from '../../unit/links/user-agents';
import { changed, SKADNETWORK_EXAMPLES } from '../../unit/skan/postbacks';

// Everything the handlers can log, metrics included: they read these when they first load, after this.
process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
process.env.KEY_CACHE_TTL_MS = '0';

let stack: LocalStack;
let logs: LogCapture;
beforeAll(async () => {
  logs = captureLogs();
  // The runtime's own error sink, as npm start has it.
  stack = await startLocalStack({ trustProxy: true, onError: (error) => console.error(error) });
});
afterAll(async () => {
  await stack?.stop();
  logs?.restore();
});

interface Tenant {
  company_key: string;
  app_key: string;
  signing_secret: string;
  server_key: string;
  link_id: string;
}

async function tenantViaAdmin(name: string): Promise<Tenant> {
  const company = (await runAdmin(['company', 'create', '--name', name, '--plan', 'free', '--monthly-cap', '50'])) as {
    company_key: string;
  };
  const app = (await runAdmin([
    'app',
    'create',
    '--company-key',
    company.company_key,
    '--name',
    `${name} app`,
    '--ios-url',
    'https://apps.apple.com/app/id1',
  ])) as {
    app_key: string;
    signing_secret: string;
  };
  const { server_key } = (await runAdmin(['server-key', 'create', '--app-key', app.app_key])) as { server_key: string };
  const { link_id } = (await runAdmin(['link', 'create', '--app-key', app.app_key, '--partner', 'meta'])) as { link_id: string };
  return { company_key: company.company_key, app_key: app.app_key, signing_secret: app.signing_secret, server_key, link_id };
}

it('writes no key, signing secret, signature, bearer token or origin secret into any log line of a full run', async () => {
  const secrets = new Set<string>();
  const sent: HttpCall[] = [];
  const call = async (request: HttpCall) => {
    sent.push(request);
    return httpCall(stack.baseUrl, request);
  };

  const a = await tenantViaAdmin('Alpha');
  const b = await tenantViaAdmin('Beta');
  for (const t of [a, b]) for (const value of Object.values(t)) if (value !== t.link_id) secrets.add(value);
  const creds = (t: Tenant) => ({ companyKey: t.company_key, appKey: t.app_key, signingSecret: t.signing_secret });
  const event = (install: string, extra: Record<string, unknown> = {}) => ({
    event_id: randomUUID(),
    event_name: 'install',
    install_uuid: install,
    ts_ms: Date.now(),
    platform: 'ios',
    device_id: 'device-secretish',
    ...extra,
  });
  const batch = (t: Tenant, events: unknown[], gzip = false) => {
    const request = signedRequest(creds(t), { sent_at_ms: Date.now(), events }, { gzip });
    return { method: 'POST', target: '/event', headers: { ...request.headers, 'x-forwarded-for': '198.51.100.90' }, body: request.body };
  };

  // Clicks: recorded, from a bot, on a honeypot, on an unknown link.
  const click = await call({
    method: 'GET',
    target: `/l/${a.link_id}?click_id=ext-1&sub1=s`,
    headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': '198.51.100.90' },
  });
  const clickId = new URL(click.headers.location).searchParams.get('click_id')!;
  const { link_id: honeypot } = (await runAdmin(['link', 'create', '--app-key', a.app_key, '--partner', 'trap', '--honeypot'])) as {
    link_id: string;
  };
  for (const [target, ua] of [
    [`/l/${a.link_id}`, 'Googlebot/2.1'],
    [`/l/${honeypot}`, MOBILE.chromeAndroid],
    ['/l/no-such-link', MOBILE.iosSafari],
  ]) {
    await call({ method: 'GET', target, headers: { 'user-agent': ua, 'x-forwarded-for': '203.0.113.91' } });
  }

  // Ingestion: accepted (plain and gzip, attributed), and every refusal.
  const install = randomUUID();
  await call(
    batch(a, [
      event(install, { attribution: { click_id: clickId } }),
      { ...event(install), event_name: 'purchase', revenue_usd: 3, platform: undefined, device_id: undefined },
    ]),
  );
  await call(
    batch(
      a,
      Array.from({ length: 12 }, () => event(randomUUID())),
      true,
    ),
  );
  await call(batch(b, [event(randomUUID()), { not: 'an event' }]));
  const good = batch(a, [event(randomUUID())]);
  await call({ ...good, headers: { ...good.headers, 'x-service-signature': 'f'.repeat(64) } });
  await call({ ...good, headers: { ...good.headers, 'x-service-company-key': b.company_key } });
  await call({ ...good, headers: { ...good.headers, 'x-service-app-key': `app_live_${'1'.repeat(32)}` } });
  await call({ ...good, headers: { ...good.headers, 'content-encoding': 'br' } });
  const bomb = gzipSync(Buffer.alloc(9 * 1024 * 1024, 0x20));
  await call({
    ...good,
    headers: {
      ...good.headers,
      'content-encoding': 'gzip',
      'x-service-signature': signedRequest(creds(a), {}).headers['x-service-signature'],
    },
    body: bomb,
  });
  await call(
    batch(
      a,
      Array.from({ length: 60 }, () => event(randomUUID())),
    ),
  ); // over the cap of 50
  await call(batch(a, [event(randomUUID())])); // 429
  await runAdmin(['company', 'suspend', '--company-key', b.company_key]);
  await call(batch(b, [event(randomUUID())]));
  await runAdmin(['company', 'resume', '--company-key', b.company_key]);

  // A store down while requests come in: the failures are logged with their errors.
  await stack.emulators.stopS3();
  await call(batch(b, [event(randomUUID())]));
  await call({ method: 'GET', target: '/health' });
  await stack.emulators.startS3();
  const fault = countingWrites(dynamoClient(), 0);
  await call({ method: 'GET', target: '/api/v1/reports/events', headers: { authorization: `Bearer ${a.server_key}` } });
  await call({
    method: 'POST',
    target: '/privacy/delete',
    ...(({ headers, body }) => ({ headers, body }))(signedRequest(creds(a), { install_uuid: install })),
  });
  fault.stop();

  // Privacy: a deletion, drained; SKAN postbacks, genuine, tampered and malformed.
  const deletion = signedRequest(creds(a), { install_uuid: install });
  await call({ method: 'POST', target: '/privacy/delete', headers: deletion.headers, body: deletion.body });
  const postback = SKADNETWORK_EXAMPLES[0].postback;
  for (const body of [
    JSON.stringify(postback),
    JSON.stringify(changed(postback, { 'transaction-id': randomUUID(), 'source-app-id': 1 })),
    '{"version":',
  ]) {
    await call({ method: 'POST', target: '/skan-postback', headers: { 'content-type': 'application/json' }, body: Buffer.from(body) });
  }

  // Reports: answered, 304, refused parameters, unknown and revoked keys.
  await stack.pollers.drain();
  const answered = await call({
    method: 'GET',
    target: '/api/v1/reports/attribution',
    headers: { authorization: `Bearer ${a.server_key}` },
  });
  await call({
    method: 'GET',
    target: '/api/v1/reports/attribution',
    headers: { authorization: `Bearer ${a.server_key}`, 'if-none-match': answered.headers.etag },
  });
  await call({ method: 'GET', target: '/api/v1/reports/cohorts?since_ms=x', headers: { authorization: `Bearer ${a.server_key}` } });
  await call({ method: 'GET', target: '/api/v1/reports/revenue', headers: { authorization: `Bearer srv_${'9'.repeat(48)}` } });
  await runAdmin(['server-key', 'revoke', '--server-key', b.server_key]);
  await call({ method: 'GET', target: '/api/v1/reports/events', headers: { authorization: `Bearer ${b.server_key}` } });

  // The admin side and the schedules.
  await runAdmin(['install', 'show', '--app-key', a.app_key, '--install-uuid', install]);
  await runAdmin(['schedule', 'run', 'privacy-drain']);
  await runAdmin(['schedule', 'run', 'health-check']);
  await runAdmin(['privacy', 'show', '--app-key', a.app_key, '--install-uuid', install]);
  await runAdmin(['rebuild', '--app-key', b.app_key]);
  await stack.pollers.drain();

  // What was sent that is secret: every signature and bearer token, and the origin secret.
  for (const request of sent) {
    for (const name of ['x-service-signature', 'x-service-company-key', 'x-service-app-key'])
      if (request.headers?.[name]) secrets.add(request.headers[name]);
    const bearer = /^Bearer (.+)$/.exec(request.headers?.authorization ?? '')?.[1];
    if (bearer) secrets.add(bearer);
  }
  secrets.add(process.env[LOCAL_ORIGIN_SECRET_VARIABLE]!);
  // A key cut short in a log is a leak too: the first 16 characters of each one's random part.
  for (const secret of [...secrets]) {
    const random = secret.replace(/^(co_live_|app_live_|srv_)/, '');
    if (random.length >= 32) secrets.add(random.slice(0, 16));
  }

  const lines = logs.lines();
  // The capture saw the run: handler logs of the failures and the drain, and EMF metrics.
  expect(lines.some((line) => line.includes('batch not taken'))).toBe(true);
  expect(lines.some((line) => line.includes('privacy drain finished'))).toBe(true);
  expect(lines.some((line) => line.includes('"_aws"'))).toBe(true);
  const leaks = lines.flatMap((line) =>
    [...secrets].filter((secret) => line.includes(secret)).map((secret) => `${secret.slice(0, 8)}… in: ${line.slice(0, 200)}`),
  );
  expect(leaks).toEqual([]);
}, 120_000);
