import { ClickStore } from '../../functions/adapters/click-store';
import { LinkStore } from '../../functions/adapters/link-store';
import { startLocalStack, createTenant, type LocalStack } from '../support/local-stack';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

/** Clicks a fresh link with the given headers and returns the click record it left. */
async function clickAs(stack: LocalStack, headers: Record<string, string>) {
  const { app } = await createTenant();
  const link = await new LinkStore(stack.endpoints.tables.links).create(app, { partner: 'edge_test' });
  const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, { redirect: 'manual', headers: { 'user-agent': IPHONE, ...headers } });
  expect(response.status).toBe(302);
  const clickId = new URL(response.headers.get('location') as string).searchParams.get('click_id');
  return new ClickStore(stack.endpoints.tables.clicks).byId(clickId as string);
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
});
