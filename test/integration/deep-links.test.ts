// Deep links over real HTTP against the local runtime: the link domains' well-known files, chosen
// by the request's Host as the edge passes it on, and a click storing its deep link data.

import { request } from 'node:http';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { runAdmin } from '../../bin/admin';
import { LinkDomainStore } from '../../functions/adapters/link-domain-store';
import { appleAppSiteAssociation, assetLinks } from '../../functions/domain/links/app-links';
import type { ClickRecord } from '../../functions/domain/links/click';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { MOBILE } from '../unit/links/user-agents';

let stack: LocalStack;
let tenant: Tenant;
const cacheTtl = process.env.KEY_CACHE_TTL_MS;

const FINGERPRINT = '14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5';

beforeAll(async () => {
  // No caching of the domains' look-ups, so a domain taken off an app is seen at once.
  process.env.KEY_CACHE_TTL_MS = '0';
  stack = await startLocalStack();
  tenant = await createTenant();
});

afterAll(async () => {
  await stack?.stop();
  if (cacheTtl === undefined) delete process.env.KEY_CACHE_TTL_MS;
  else process.env.KEY_CACHE_TTL_MS = cacheTtl;
});

/** fetch cannot set Host; node:http can, as a browser on the link domain sends it. */
function get(path: string, host: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(path, stack.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const refusal = (argv: string[]) =>
  runAdmin(argv).then(
    () => undefined,
    (error: Error) => error.message,
  );

describe('the well-known files of a link domain', () => {
  it('serves exactly the apps configured on the domain the Host names, and 404 on any other host', async () => {
    const app = tenant.app.app_key;
    const updated = await runAdmin([
      'app',
      'update',
      '--app-key',
      app,
      '--ios-app-id',
      'ABCDE12345.com.example.app',
      '--android-package',
      'com.example.app',
      '--android-cert-sha256',
      FINGERPRINT.toLowerCase(),
      '--link-domain',
      'go.example.com',
      '--link-domain',
      'Links.Example.com',
    ]);
    expect(updated).toMatchObject({
      ios_app_id: 'ABCDE12345.com.example.app',
      android_package: 'com.example.app',
      android_cert_sha256: [FINGERPRINT],
      link_domains: ['go.example.com', 'links.example.com'],
    });
    const apps = [
      {
        app_id: tenant.app.app_id,
        ios_app_id: 'ABCDE12345.com.example.app',
        android_package: 'com.example.app',
        android_cert_sha256: [FINGERPRINT],
      },
    ];

    const aasa = await get('/.well-known/apple-app-site-association', 'go.example.com');
    expect(aasa.status).toBe(200);
    expect(aasa.body).toBe(appleAppSiteAssociation(apps));
    expect(aasa.headers['content-type']).toBe('application/json');
    expect(aasa.headers['cache-control']).toBe('public, max-age=3600');
    const links = await get('/.well-known/assetlinks.json', 'links.example.com:443');
    expect(links.status).toBe(200);
    expect(links.body).toBe(assetLinks(apps));

    for (const host of ['other.example.com', '127.0.0.1']) {
      const missing = await get('/.well-known/assetlinks.json', host);
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body)).toEqual({ error: 'not_found' });
    }

    // Another company's app cannot name the domain; the app that leaves a domain leaves its files.
    const other = await createTenant();
    expect(
      await refusal([
        'app',
        'update',
        '--app-key',
        other.app.app_key,
        '--ios-app-id',
        'ZZZZZ99999.com.other',
        '--link-domain',
        'go.example.com',
      ]),
    ).toBe("link_domain_taken: go.example.com serves another company's apps");
    await runAdmin(['app', 'update', '--app-key', app, '--link-domain', 'go.example.com']);
    expect(await new LinkDomainStore(resourceName.table('tenants')).apps('links.example.com')).toEqual([]);
    expect((await get('/.well-known/assetlinks.json', 'links.example.com')).status).toBe(404);
    expect((await get('/.well-known/assetlinks.json', 'go.example.com')).status).toBe(200);
  }, 60_000);

  it('refuses a link setting out of its documented format, naming the flag', async () => {
    const app = tenant.app.app_key;
    expect(await refusal(['app', 'update', '--app-key', app, '--ios-app-id', 'com.example.app'])).toMatch(
      /^--ios-app-id must be TEAMID\.bundle\.id/,
    );
    expect(await refusal(['app', 'update', '--app-key', app, '--android-package', 'example'])).toMatch(/^--android-package must be/);
    expect(await refusal(['app', 'update', '--app-key', app, '--android-cert-sha256', 'AA:BB'])).toMatch(/^--android-cert-sha256 must be/);
    expect(await refusal(['app', 'update', '--app-key', app, '--link-domain', '*.example.com'])).toMatch(/^--link-domain must be/);
  }, 30_000);
});

describe('a click on a link with deep link data', () => {
  it("stores the link's deep link with the click URL's overrides", async () => {
    const made = await runAdmin([
      'link',
      'create',
      '--app-key',
      tenant.app.app_key,
      '--partner',
      'acme_ads',
      '--deep-link-value',
      'summer_sale',
      '--deep-link-sub1',
      'red',
      '--web-url',
      'https://example.com/landing',
    ]);
    const linkId = String(made.link_id);
    const response = await fetch(`${stack.baseUrl}/l/${linkId}?deep_link_sub1=blue&deep_link_sub10=ten`, {
      redirect: 'manual',
      headers: { 'user-agent': MOBILE.chromeAndroid },
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).not.toContain('blue');
    const { Items } = await dynamoClient().send(
      new ScanCommand({
        TableName: resourceName.table('click_log'),
        FilterExpression: 'link_id = :l',
        ExpressionAttributeValues: { ':l': linkId },
      }),
    );
    expect((Items as ClickRecord[]).map((click) => click.deep_link)).toEqual([{ value: 'summer_sale', sub1: 'blue', sub10: 'ten' }]);

    expect(
      await refusal(['link', 'create', '--app-key', tenant.app.app_key, '--partner', 'p', '--deep-link-value', 'x'.repeat(101)]),
    ).toMatch(/^--deep-link-value must be 1 to 100 characters/);
    expect(await refusal(['link', 'create', '--app-key', tenant.app.app_key, '--partner', 'p', '--web-url', 'http://example.com'])).toBe(
      '--web-url must be an https URL',
    );
  }, 30_000);
});
