// CORS on the SDK routes through the local edge, with each function's own environment and grants:
// `admin app update --web-origin` lists origins, a preflight from a listed origin is answered by
// cors-preflight from the web_origin# index, one from an unlisted origin is refused, and the
// answers of POST /event carry Access-Control-Allow-Origin only for the origins of the app whose
// keys signed them (docs/sdk.md, "CORS").

import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { runAdmin } from '../../bin/admin';
import { signBody } from '../../functions/domain/ingest/signature';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

const SHOP = 'https://shop.example.com';
const DEV = 'http://localhost:5173';
let stack: LocalStack;
let listing: Tenant;
let other: Tenant;

beforeAll(async () => {
  stack = await startLocalStack();
  listing = await createTenant();
  other = await createTenant();
  await runAdmin(['app', 'update', '--app-key', listing.app.app_key, '--web-origin', `${SHOP}/`, '--web-origin', 'HTTP://LOCALHOST:5173']);
});

afterAll(async () => {
  await stack?.stop();
});

const preflight = (path: string, origin: string) =>
  fetch(`${stack.baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,content-encoding,x-service-company-key,x-service-app-key,x-service-signature',
    },
  });

function postEvent(tenant: Tenant, origin: string | undefined, secret = tenant.app.signing_secret) {
  const body = JSON.stringify({
    events: [{ event_id: randomUUID(), event_name: 'page_view', install_uuid: randomUUID(), ts_ms: Date.now() }],
    sent_at_ms: Date.now(),
  });
  return fetch(`${stack.baseUrl}/event`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-company-key': tenant.company.company_key,
      'x-service-app-key': tenant.app.app_key,
      'x-service-signature': signBody(secret, Buffer.from(body)),
      ...(origin && { origin }),
    },
    body,
  });
}

describe('CORS on the SDK routes', () => {
  it('stores the listed origins as browsers send them, and points each one to the app', async () => {
    const shown = (await runAdmin(['app', 'show', '--app-key', listing.app.app_key])) as { web_origins?: string[] };
    expect(shown.web_origins).toEqual([SHOP, DEV]);
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: resourceName.table('tenants'), Key: { pk: `web_origin#${SHOP}` } }),
    );
    expect([...(Item?.app_ids ?? [])]).toEqual([listing.app.app_id]);
  });

  it('refuses a malformed origin and a list past 20, naming the flag', async () => {
    await expect(runAdmin(['app', 'update', '--app-key', listing.app.app_key, '--web-origin', 'http://shop.example.com'])).rejects.toThrow(
      /--web-origin must be origins/,
    );
    await expect(
      runAdmin(['app', 'update', '--app-key', listing.app.app_key, '--web-origin', 'https://shop.example.com/app']),
    ).rejects.toThrow(/--web-origin/);
    const many = Array.from({ length: 21 }, (_, i) => `https://s${i}.example.com`).join(',');
    await expect(runAdmin(['app', 'update', '--app-key', listing.app.app_key, '--web-origin', many])).rejects.toThrow(/--web-origin/);
  });

  it.each(['/event', '/privacy/delete', '/sdk/v1/attribution', '/sdk/v1/skan-schema'])(
    'answers the preflight of %s from a listed origin: the signing headers, no credentials',
    async (path) => {
      const response = await preflight(path, DEV);
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(DEV);
      expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
      expect(response.headers.get('access-control-allow-headers')?.split(', ')).toEqual(
        expect.arrayContaining(['content-type', 'content-encoding', 'x-service-company-key', 'x-service-app-key', 'x-service-signature']),
      );
      expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    },
  );

  it('refuses the preflight of an unlisted origin, and of a route browsers may not call, 403 origin_not_allowed', async () => {
    for (const [path, origin] of [
      ['/event', 'https://evil.example.com'],
      ['/event', 'null'],
      ['/health', SHOP],
    ] as const) {
      const response = await preflight(path, origin);
      expect({ path, origin, status: response.status, body: await response.json() }).toEqual({
        path,
        origin,
        status: 403,
        body: { error: 'origin_not_allowed' },
      });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it("allows an answer to the app's own origin only, its refusals too", async () => {
    const allowed = await postEvent(listing, SHOP);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(allowed.headers.get('access-control-expose-headers')).toContain('retry-after');

    const refused = await postEvent(listing, SHOP, 'not the secret');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(SHOP);

    // Another origin, and another app's keys from a listed origin: taken (the keys are right), not readable by the page.
    for (const response of [await postEvent(listing, 'https://evil.example.com'), await postEvent(other, SHOP)]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('vary')).toBe('Origin');
    }
    const server = await postEvent(listing, undefined);
    expect(server.status).toBe(200);
    expect(server.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('takes an app off the origins it no longer lists', async () => {
    await runAdmin(['app', 'update', '--app-key', listing.app.app_key, '--web-origin', DEV]);
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: resourceName.table('tenants'), Key: { pk: `web_origin#${SHOP}` } }),
    );
    expect(Item?.app_ids).toBeUndefined();
  });
});
