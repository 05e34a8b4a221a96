// The SDK core outside any browser (issue 38, item 5): the core of packages/sdk-core on Node's own
// fetch and timers against the local runtime, with each function's environment and grants. A click
// on a link with deep link data as an Android phone, the SDK's first launch with the Play referrer
// (the deep link reaches onDeepLink), then purchases tracked through a network that loses answers
// after the service has taken the batch, 503s before it, and an app killed and started again over
// the same storage: every tracked purchase is counted once.

import { randomUUID } from 'node:crypto';
import { fetchPort } from '../../conformance/harnesses/sdk-core-node';
import { LinkStore } from '../../functions/adapters/link-store';
import { SkanSchemaStore } from '../../functions/adapters/skan-schema-store';
import { validateSkanSchema } from '../../functions/domain/skan/schema';
import { resourceName } from '../../functions/shared/config';
import type { NetworkPort, Ports, SdkConfig, SkanUpdate, StoragePort } from '../../packages/sdk-core/src';
import { Sdk, skanConversions } from '../../packages/sdk-core/src';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { waitFor } from '../support/wait-for';
import { MOBILE } from '../unit/links/user-agents';

let stack: LocalStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant();
});

afterAll(async () => {
  await stack?.stop();
});

/** Node's fetch as the core's network port, from one address (the click's). */
const nodeFetch = fetchPort(fetch, { 'x-forwarded-for': '10.88.0.7' });

/**
 * A network that fails the way a phone's does, on a fixed pattern: a 503 before the request
 * reaches the service, and an answer lost after the service took the batch (the core must send the
 * same events again, and the service count them once).
 */
function flakyNetwork(): { port: NetworkPort; lost: () => number } {
  let calls = 0;
  let lost = 0;
  const port: NetworkPort = async (request) => {
    calls++;
    if (!request.url.endsWith('/event')) return nodeFetch(request);
    if (calls % 5 === 1) return { status: 503, headers: { 'retry-after': undefined }, body: '{"error":"store_unavailable"}' };
    const answer = await nodeFetch(request);
    if (calls % 5 === 3) {
      lost++;
      throw new Error('the connection dropped before the answer');
    }
    return answer;
  };
  return { port, lost: () => lost };
}

/**
 * One run of the app over the device's storage and network: once killed, nothing it has in flight
 * reaches the storage, the network or the app's callbacks again, as when the process dies.
 */
function appRun(base: Ports): { ports: Ports; kill: () => void } {
  let dead = false;
  const never = new Promise<never>(() => undefined);
  const alive = async <T>(work: () => Promise<T>): Promise<T> => {
    if (dead) return never;
    const result = await work();
    return dead ? never : result;
  };
  return {
    ports: {
      ...base,
      storage: {
        get: (key) => alive(() => base.storage.get(key)),
        set: (key, value) => alive(() => base.storage.set(key, value)),
        remove: (key) => alive(() => base.storage.remove(key)),
      },
      network: (request) => alive(() => base.network(request)),
    },
    kill: () => {
      dead = true;
    },
  };
}

async function purchases(): Promise<number> {
  const response = await fetch(`${stack.baseUrl}/api/v1/reports/events?limit=1000`, {
    headers: { authorization: `Bearer ${tenant.serverKey}` },
  });
  const { rows } = (await response.json()) as { rows: { event_name: string; events: number }[] };
  return rows.filter((row) => row.event_name === 'purchase').reduce((sum, row) => sum + row.events, 0);
}

describe('the SDK core on Node', () => {
  it('gets the deferred deep link at first launch, and counts every purchase once through lost answers, 503s and a restart', async () => {
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, {
      partner: 'meta',
      deep_link: { value: 'product/42' },
    });
    const click = await fetch(`${stack.baseUrl}/l/${link.link_id}`, {
      redirect: 'manual',
      headers: { 'user-agent': MOBILE.chromeAndroid, 'x-forwarded-for': '10.88.0.7' },
    });
    const referrer = new URL(click.headers.get('location') ?? 'http://x/').searchParams.get('referrer') ?? '';
    expect(referrer).toContain('click_id=');

    const kept = new Map<string, string>();
    const storage: StoragePort = {
      get: async (key) => kept.get(key),
      set: async (key, value) => void kept.set(key, value),
      remove: async (key) => void kept.delete(key),
    };
    const network = flakyNetwork();
    const deepLinks: Record<string, string>[] = [];
    const rejected: unknown[] = [];
    const config: SdkConfig = {
      baseUrl: stack.baseUrl,
      companyKey: tenant.company.company_key,
      appKey: tenant.app.app_key,
      signingSecret: tenant.app.signing_secret,
      batchSize: 40,
      flushIntervalMs: 100,
      backoff: { baseMs: 20, maxMs: 200 },
      onDeepLink: (deepLink) => deepLinks.push(deepLink),
      onEventRejected: (event) => rejected.push(event),
    };
    const ports: Ports = {
      storage,
      network: network.port,
      scheduler: { now: Date.now, setTimeout: (callback, ms) => clearTimeout.bind(null, setTimeout(callback, ms)) },
      platform: { platform: 'android', kind: 'android', appVersion: '1.0.0', randomUuid: randomUUID, random: Math.random },
      installSignals: async () => ({ install_referrer: referrer }),
    };

    const run = appRun(ports);
    const first = await Sdk.start(config, run.ports);
    for (let i = 0; i < 150; i++) await first.track('purchase', { revenue: 1.5 });
    // Killed: nothing of the running instance survives but what it stored.
    run.kill();
    first.stop();
    const second = await Sdk.start(config, ports);
    for (let i = 0; i < 150; i++) await second.track('purchase', { revenue: 1.5 });
    await waitFor(async () => second.diagnostics().queued === 0, { timeoutMs: 30_000, what: 'the queue sent' });
    second.stop();

    await stack.pollers.drain();
    await waitFor(async () => (await purchases()) >= 300, { timeoutMs: 20_000, what: 'the purchases counted' });
    expect(await purchases()).toBe(300);
    expect(network.lost()).toBeGreaterThan(0);
    expect(rejected).toEqual([]);
    expect(deepLinks).toEqual([expect.objectContaining({ value: 'product/42' })]);
  }, 90_000);

  it('chooses the SKAN value from the schema GET /sdk/v1/skan-schema serves, and revalidates it by its ETag', async () => {
    const validation = validateSkanSchema({
      fine: [{ value: 12, revenue_usd: [25, 50], events: ['purchase'] }],
      coarse: [{ window: 0, value: 'medium', revenue_usd: [10, 100] }],
    });
    if (!validation.ok) throw new Error(validation.message);
    await new SkanSchemaStore(resourceName.table('tenants')).put(tenant.app.app_id, validation.schema);
    const statuses: number[] = [];
    const network: NetworkPort = async (request) => {
      const response = await nodeFetch(request);
      if (request.url.endsWith('/sdk/v1/skan-schema')) statuses.push(response.status);
      return response;
    };
    const kept = new Map<string, string>();
    const taken: SkanUpdate[] = [];
    let skew = 0;
    const sdk = await Sdk.start(
      {
        baseUrl: stack.baseUrl,
        companyKey: tenant.company.company_key,
        appKey: tenant.app.app_key,
        signingSecret: tenant.app.signing_secret,
      },
      {
        storage: { get: async (key) => kept.get(key), set: async (key, value) => void kept.set(key, value), remove: async () => undefined },
        network,
        scheduler: { now: () => Date.now() + skew, setTimeout: (callback, ms) => clearTimeout.bind(null, setTimeout(callback, ms)) },
        platform: { platform: 'ios', kind: 'ios', appVersion: '1.0.0', randomUuid: randomUUID, random: Math.random },
        skan: skanConversions({ updateConversionValue: async (update) => void taken.push(update) }),
      },
    );
    await waitFor(async () => statuses.length === 1 && kept.get('attribution.state.v1')?.includes('"etag"') === true, {
      timeoutMs: 10_000,
      what: 'the schema fetched',
    });
    await sdk.track('purchase', { revenue: 30 });
    expect(taken).toEqual([{ window: 0, fine: 12, coarse: 'medium', lockWindow: false }]);
    skew = 5 * 60_000; // The cache's five minutes later: asked again with If-None-Match.
    await sdk.track('level_up');
    await waitFor(async () => statuses.length === 2, { timeoutMs: 10_000, what: 'the schema revalidated' });
    expect(statuses).toEqual([200, 304]);
    sdk.stop();
  }, 30_000);
});
