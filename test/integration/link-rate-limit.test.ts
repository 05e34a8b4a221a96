// The per-block click rate limit: over HTTP with the default 120 clicks per 60 s, and the
// DynamoDB counter itself driven with an injected clock across a window boundary.

import { LinkStore } from '../../functions/adapters/link-store';
import { RateLimitStore } from '../../functions/adapters/rate-limit-store';
import { type Admission, admit, slidingWindow } from '../../functions/domain/links/sliding-window';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
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

async function click(linkId: string, ip: string) {
  const response = await fetch(`${stack.baseUrl}/l/${linkId}`, {
    redirect: 'manual',
    headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip },
  });
  return {
    status: response.status,
    location: response.headers.get('location'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

/** Sends the clicks in parallel batches: fast on two cores without opening hundreds of sockets at once. */
async function clickAll(linkId: string, ips: string[], batch = 40) {
  const results: Awaited<ReturnType<typeof click>>[] = [];
  for (let i = 0; i < ips.length; i += batch) results.push(...(await Promise.all(ips.slice(i, i + batch).map((ip) => click(linkId, ip)))));
  return results;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('the click rate limit over HTTP', () => {
  it('answers the 121st click within a minute from one /24 with 429 and Retry-After, and leaves other blocks alone', async () => {
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'acme' });
    const first = await clickAll(
      link.link_id,
      range(120).map((i) => `198.51.100.${i + 1}`),
    );
    expect(first.map((r) => r.status)).toEqual(range(120).map(() => 302));
    expect(first.every((r) => r.location?.includes('click_id='))).toBe(true);

    const limited = await click(link.link_id, '198.51.100.250');
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.body)).toEqual({ error: 'rate_limited' });
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(65);
    expect(limited.retryAfter).toMatch(/^\d+$/);

    expect((await click(link.link_id, '198.51.101.1')).location).toContain('click_id=');
    expect((await click(link.link_id, '198.51.100.1')).status).toBe(429);
  });

  it('keys IPv6 clicks on the /48', async () => {
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'acme' });
    const results = await clickAll(
      link.link_id,
      range(121).map((i) => `2001:db8:42:${i.toString(16)}::1`),
    );
    expect(results.filter((r) => r.status === 302)).toHaveLength(120);
    expect(results.filter((r) => r.status === 429)).toHaveLength(1);
    expect((await click(link.link_id, '2001:db8:43::1')).status).toBe(302);
  });
});

describe('the DynamoDB slot counter', () => {
  const window = slidingWindow(120, 60_000);
  const counter = () => new RateLimitStore(resourceName.table('rate_limits'));
  const burst = (key: string, atMs: number, n: number): Promise<Admission[]> =>
    Promise.all(range(n).map(() => admit(counter(), key, atMs, window)));
  const admitted = (results: Admission[]) => results.filter((r) => r.admitted).length;
  // An instant on a minute boundary, where a fixed per-minute counter would start afresh.
  const boundary = Math.ceil(Date.now() / 60_000) * 60_000;

  it('admits exactly the limit from concurrent requests', async () => {
    expect(admitted(await burst('block#test-concurrent', boundary, 200))).toBe(120);
  });

  it('cannot be doubled by a burst straddling the window boundary', async () => {
    const key = 'block#test-boundary';
    expect(admitted(await burst(key, boundary - 1, 120))).toBe(120);
    const second = await burst(key, boundary + 1, 120);
    expect(admitted(second)).toBe(0);
    const retryAfter = Math.max(...second.map((r) => (r.admitted ? 0 : r.retryAfterSeconds)));
    expect(retryAfter).toBeLessThanOrEqual(65);
    expect(admitted(await burst(key, boundary + 1 + retryAfter * 1000, 120))).toBe(120);
  });

  it('forgets slots that can no longer count', async () => {
    const key = 'block#test-stale';
    for (let t = 0; t < 200_000; t += 4_000) await admit(counter(), key, boundary + t, window);
    const counts = await counter().increment(key, Math.floor((boundary + 200_000) / window.slotMs), boundary + 300_000);
    expect(counts.size).toBeLessThanOrEqual(14);
  });
});
