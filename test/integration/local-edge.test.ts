import { Agent, request as httpRequest } from 'node:http';
import { ClickStore } from '../../functions/adapters/click-store';
import { LinkStore } from '../../functions/adapters/link-store';
import { originVerifyHeader } from '../../lib/manifest';
import * as lambda from '../../local/lambda';
import { LOCAL_ORIGIN_SECRET_VARIABLE } from '../../local/origin-secret';
import { createTenant, type LocalStack, startLocalStack } from '../support/local-stack';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

/** Clicks a fresh link with the given headers and returns the click record it left. */
async function clickAs(stack: LocalStack, headers: Record<string, string>) {
  const { app } = await createTenant();
  const link = await new LinkStore(stack.endpoints.tables.links).create(app, { partner: 'edge_test' });
  const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, { redirect: 'manual', headers: { 'user-agent': IPHONE, ...headers } });
  expect(response.status).toBe(302);
  const clickId = new URL(response.headers.get('location') as string).searchParams.get('click_id');
  return new ClickStore({ log: stack.endpoints.tables.click_log, legacy: stack.endpoints.tables.clicks }).byId(
    app.app_id,
    clickId as string,
  );
}

const forged = {
  'x-forwarded-for': '203.0.113.50',
  'cloudfront-viewer-address': '198.51.100.1:443',
  'cloudfront-viewer-country': 'FR',
  'cloudfront-viewer-asn': '3215',
  'x-origin-verify': 'guessed',
};

describe('the local edge without TRUST_PROXY', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ trustProxy: false });
  });
  afterAll(() => stack.stop());

  it('takes the address from the connection and drops every viewer header the client forged', async () => {
    const click = await clickAs(stack, forged);
    expect(click).toMatchObject({ ip: '127.0.0.1', ip_block: '127.0.0.0/24' });
    expect(click?.country).toBeUndefined();
    expect(click?.asn).toBeUndefined();
  });

  describe('and its API Gateway URL called directly, without CloudFront', () => {
    const invoked = () => invoke.mock.calls.map(([name]) => name);
    let invoke: jest.SpyInstance;
    beforeEach(() => {
      invoke = jest.spyOn(lambda, 'invoke');
    });
    afterEach(() => invoke.mockRestore());

    it('answers 401 Unauthorized, as API Gateway does, to a request without the origin header, and invokes nothing', async () => {
      for (const path of ['/health', '/event', '/l/anything']) {
        const response = await fetch(`${stack.apiUrl}${path}`);
        expect([path, response.status, await response.json()]).toEqual([path, 401, { message: 'Unauthorized' }]);
      }
      expect(invoked()).toEqual([]);
    });

    it('answers 403 Forbidden to a wrong value after invoking only the authorizer, whose answer it keeps for that value', async () => {
      for (let i = 0; i < 2; i += 1) {
        const response = await fetch(`${stack.apiUrl}/health`, { headers: { [originVerifyHeader]: 'guessed' } });
        expect([response.status, await response.json()]).toEqual([403, { message: 'Forbidden' }]);
      }
      expect(invoked()).toEqual(['origin-authorizer']);
    });

    it('passes a request carrying the origin secret to its route, and so every request CloudFront sends', async () => {
      // The fallback route: its answer depends on no stored state (health keeps its probes a while).
      const secret = process.env[LOCAL_ORIGIN_SECRET_VARIABLE] as string;
      const direct = await fetch(`${stack.apiUrl}/nowhere`, { headers: { [originVerifyHeader]: secret } });
      expect([direct.status, await direct.json()]).toEqual([404, { error: 'not_found' }]);
      const throughEdge = await fetch(`${stack.baseUrl}/nowhere`);
      expect([throughEdge.status, await throughEdge.json()]).toEqual([404, { error: 'not_found' }]);
      expect(invoked().filter((name) => name === 'fallback')).toHaveLength(2);
      expect(invoked().filter((name) => name === 'origin-authorizer').length).toBeLessThanOrEqual(1);
    });
  });
});

describe('the local edge with TRUST_PROXY=1', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ trustProxy: true });
  });
  afterAll(() => stack.stop());

  it('takes the address from X-Forwarded-For and lets a simulation set country and ASN, but never the address header or the secret', async () => {
    const click = await clickAs(stack, forged);
    expect(click).toMatchObject({ ip: '203.0.113.50', ip_block: '203.0.113.0/24', country: 'FR', asn: 3215 });
  });

  it('reduces a bracketed IPv6 or an IPv4 with a port to the address', async () => {
    expect(await clickAs(stack, { 'x-forwarded-for': '[2001:db8::1]:443' })).toMatchObject({ ip: '2001:db8::1' });
    expect(await clickAs(stack, { 'x-forwarded-for': '203.0.113.51:8080, 10.0.0.1' })).toMatchObject({ ip: '203.0.113.51' });
  });

  it('ignores an X-Forwarded-For that is not an IP literal and uses the connection address', async () => {
    expect(await clickAs(stack, { 'x-forwarded-for': 'unknown' })).toMatchObject({ ip: '127.0.0.1' });
    expect(await clickAs(stack, { 'x-forwarded-for': 'proxy.example.com:80' })).toMatchObject({ ip: '127.0.0.1' });
  });
});

describe("the local edge with a body over API Gateway's limit", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ trustProxy: false });
  });
  afterAll(() => stack.stop());

  it('answers 413 as API Gateway does and keeps the keep-alive connection usable for the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (path: string, body?: Buffer) =>
      new Promise<{ status?: number; text: string; reusedSocket: boolean }>((resolve, reject) => {
        const request = httpRequest(
          `${stack.baseUrl}${path}`,
          { method: body ? 'POST' : 'GET', agent, headers: { 'content-type': 'application/json' } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode, text, reusedSocket: request.reusedSocket }));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    try {
      const tooLarge = await send('/event', Buffer.alloc(10 * 1024 * 1024 + 1, 'a'));
      expect(tooLarge.status).toBe(413);
      expect(JSON.parse(tooLarge.text)).toEqual({ message: 'Request Entity Too Large' });
      const next = await send('/health');
      expect(next.status).toBe(200);
      expect(next.reusedSocket).toBe(true);
    } finally {
      agent.destroy();
    }
  });
});
