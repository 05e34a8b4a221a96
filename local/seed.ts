import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LinkStore } from '../functions/adapters/link-store';
import { SigningSecretStore } from '../functions/adapters/signing-secret-store';
import { TenantStore } from '../functions/adapters/tenant-store';
import { type FunctionSpec, functions } from '../lib/manifest';

/** The demo app's App Store id (its ios_url): what the banner's SKAN postback names. */
const DEMO_APP_STORE_ID = '1234567890';

/** The demo tenant a first `npm start` creates, so a newcomer can send an event at once. */
export interface Demo {
  company_id: string;
  company_key: string;
  app_id: string;
  app_key: string;
  signing_secret: string;
  server_key: string;
  /** A server key of the `cost` scope: it uploads ad spend (POST /api/v1/cost) and reads nothing. */
  cost_key: string;
  /** A server key of the `ad_revenue` scope: it sends a mediation platform's impressions (POST /api/v1/ad-revenue). */
  ad_revenue_key: string;
  link_id: string;
  link_url: string;
}

export async function seedDemo(
  dataDir: string,
  names: { tenants: string; signing_secrets: string; links: string },
  baseUrl: string,
): Promise<{ demo: Demo; created: boolean }> {
  const file = join(dataDir, 'demo.json');
  const tenants = new TenantStore(names.tenants, new SigningSecretStore(names.signing_secrets));
  const costKey = async (appKey: string) => (await tenants.createServerKey(appKey, ['cost'], 'demo cost upload')).serverKey;
  const adRevenueKey = async (appKey: string) =>
    (await tenants.createServerKey(appKey, ['ad_revenue'], 'demo ad revenue upload')).serverKey;
  if (existsSync(file)) {
    const demo = JSON.parse(readFileSync(file, 'utf8')) as Omit<Demo, 'cost_key' | 'ad_revenue_key'> &
      Partial<Pick<Demo, 'cost_key' | 'ad_revenue_key'>>;
    if (demo.cost_key !== undefined && demo.ad_revenue_key !== undefined)
      return { demo: { ...demo, cost_key: demo.cost_key, ad_revenue_key: demo.ad_revenue_key }, created: false };
    // A demo made before the banner had a cost or ad-revenue curl: it gets the missing key now, once.
    const upgraded: Demo = {
      ...demo,
      cost_key: demo.cost_key ?? (await costKey(demo.app_key)),
      ad_revenue_key: demo.ad_revenue_key ?? (await adRevenueKey(demo.app_key)),
    };
    writeFileSync(file, `${JSON.stringify(upgraded, null, 2)}\n`, { mode: 0o600 });
    return { demo: upgraded, created: false };
  }
  const company = await tenants.createCompany({ name: 'Demo Company' });
  const app = await tenants.createApp({
    companyKey: company.company_key,
    name: 'Demo App',
    ios_url: `https://apps.apple.com/app/id${DEMO_APP_STORE_ID}`,
    android_url: 'https://play.google.com/store/apps/details?id=com.example.demo',
    web_url: 'https://example.com/demo',
  });
  // The demo app's link identity, so the banner's well-known curls answer (docs/deep-links.md).
  await tenants.updateApp(app.app_key, {
    ios_app_id: 'ABCDE12345.com.example.demo',
    android_package: 'com.example.demo',
    android_cert_sha256: [DEMO_CERT_SHA256],
    link_domains: [DEMO_LINK_DOMAIN],
  });
  // The page README's "Add the web SDK to a page" serves, so a browser may call the demo app (docs/sdk.md, "CORS").
  await tenants.updateApp(app.app_key, { web_origins: [DEMO_WEB_ORIGIN] });
  const { serverKey } = await tenants.createServerKey(app.app_key);
  const link = await new LinkStore(names.links).create(app, { partner: 'demo_network', campaign: 'launch' });
  const demo: Demo = {
    company_id: company.company_id,
    company_key: company.company_key,
    app_id: app.app_id,
    app_key: app.app_key,
    signing_secret: app.signing_secret,
    server_key: serverKey,
    cost_key: await costKey(app.app_key),
    ad_revenue_key: await adRevenueKey(app.app_key),
    link_id: link.link_id,
    link_url: `${baseUrl}/l/${link.link_id}`,
  };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return { demo, created: true };
}

/** The demo app's link domain and signing certificate fingerprint (made up: no real app is signed with it). */
const DEMO_LINK_DOMAIN = 'go.example.com';
const DEMO_CERT_SHA256 = Array.from({ length: 32 }, (_, i) => (i * 7 + 16).toString(16).toUpperCase().padStart(2, '0')).join(':');

/** Where README's "Add the web SDK to a page" serves examples/web/. */
export const DEMO_WEB_ORIGIN = 'http://localhost:8080';

/** The routes that answer whatever no other route does (unknown reports, unknown paths): nothing to try. */
export const CATCH_ALL_ROUTES: readonly string[] = ['ANY /api/v1/reports/{proxy+}', '$default'];

const routeKeys = new Set(Object.values(functions as Record<string, FunctionSpec>).flatMap((f) => f.routes ?? []));

/** One thing to try: the routes it calls and the lines to paste. */
export interface Section {
  readonly routes: readonly string[];
  readonly lines: readonly string[];
}

/**
 * Ready-to-paste curl commands for every endpoint the manifest serves (the catch-alls aside), with
 * the demo credentials filled in. Each runs on its own, from the repository (the SKAN postback is
 * signed by sim/postback.ts); test/integration/start-banner.test.ts runs every one.
 */
export function demoCurls(demo: Demo, baseUrl: string): string {
  return demoSections(demo, baseUrl)
    .filter((section) => section.routes.every((route) => routeKeys.has(route)))
    .map((section) => section.lines.join('\n'))
    .join('\n\n');
}

export function demoSections(demo: Demo, baseUrl: string): Section[] {
  const now = '$(date +%s000)';
  const install = '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f';
  const firstLaunch = '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6';
  const appHeaders = `-H 'x-service-company-key: ${demo.company_key}' -H 'x-service-app-key: ${demo.app_key}'`;
  const hmac = `openssl dgst -sha256 -hmac '${demo.signing_secret}' | sed 's/^.* //'`;
  const signed = (path: string, body: string) => [
    `body='${body}'`,
    `sig=$(printf '%s' "$body" | ${hmac})`,
    `curl -i ${baseUrl}${path} -H 'content-type: application/json' \\`,
    `  ${appHeaders} \\`,
    `  -H "x-service-signature: $sig" --data-binary "$body"`,
  ];
  const bearer = (key: string) => `-H 'authorization: Bearer ${key}'`;
  const reports: [string, string][] = [
    ['attribution', ''],
    ['revenue', ''],
    ['cohorts', ''],
    ['events', ''],
    ['performance', '?group_by=partner,platform'],
    ['skan', ''],
  ];
  return [
    { routes: ['GET /health'], lines: ['# Health', `curl -i ${baseUrl}/health`] },
    {
      routes: ['OPTIONS /{proxy+}'],
      lines: [
        "# A browser's CORS preflight from the page the demo app lists (docs/sdk.md)",
        `curl -i -X OPTIONS ${baseUrl}/event -H 'origin: ${DEMO_WEB_ORIGIN}' -H 'access-control-request-method: POST'`,
      ],
    },
    {
      routes: ['POST /event'],
      lines: [
        "# Send an event batch (signed with the app's signing secret)",
        ...signed(
          '/event',
          `{"sent_at_ms":'${now}',"events":[{"event_id":"e-1","event_name":"install","install_uuid":"${install}","ts_ms":'${now}',"platform":"ios"}]}`,
        ),
      ],
    },
    {
      routes: ['GET /l/{link_id}'],
      lines: [
        '# Click the demo tracking link as an iPhone',
        `curl -i '${demo.link_url}?click_id=abc123&sub1=creative_a' -A 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'`,
      ],
    },
    {
      routes: ['GET /.well-known/apple-app-site-association', 'GET /.well-known/assetlinks.json'],
      lines: [
        "# The demo link domain's well-known files, chosen by the Host header (a demo made before them: 404 until `admin app update --link-domain`)",
        `curl -i -w '\\n' -H 'host: ${DEMO_LINK_DOMAIN}' ${baseUrl}/.well-known/apple-app-site-association`,
        `curl -i -w '\\n' -H 'host: ${DEMO_LINK_DOMAIN}' ${baseUrl}/.well-known/assetlinks.json`,
      ],
    },
    {
      routes: ['POST /privacy/delete'],
      lines: ["# Ask for the install's data to be deleted", ...signed('/privacy/delete', `{"install_uuid":"${install}"}`)],
    },
    {
      routes: reports.map(([name]) => `GET /api/v1/reports/${name}`),
      lines: [
        '# Read the reports with the server key (rows appear a second or two after an event)',
        ...reports.map(([name, query]) => `curl -i -w '\\n' '${baseUrl}/api/v1/reports/${name}${query}' ${bearer(demo.server_key)}`),
      ],
    },
    {
      routes: ['GET /api/v1/stream/events'],
      lines: [
        '# Follow the event stream: every counted event with its attribution, about 10 s after it was counted',
        `curl -i ${baseUrl}/api/v1/stream/events ${bearer(demo.server_key)}`,
      ],
    },
    {
      routes: ['POST /api/v1/cost'],
      lines: [
        "# Upload a day's ad spend with the cost key (it reads nothing)",
        `curl -i ${baseUrl}/api/v1/cost ${bearer(demo.cost_key)} -H 'content-type: application/json' \\`,
        `  --data '{"rows":[{"date":"'$(date -u +%F)'","partner":"demo_network","platform":"ios","cost":12.5,"currency":"USD"}]}'`,
      ],
    },
    {
      routes: ['POST /api/v1/ad-revenue'],
      lines: [
        "# Send a mediation platform's impression with the ad-revenue key (docs/ad-revenue.md)",
        `curl -i ${baseUrl}/api/v1/ad-revenue ${bearer(demo.ad_revenue_key)} -H 'content-type: application/json' \\`,
        `  --data '{"impressions":[{"install_uuid":"${firstLaunch}","ts_ms":'$(date +%s000)',"ad_revenue":{"source":"admob","network":"AdMob","format":"rewarded","revenue":0.012,"currency":"USD","precision":"estimated","impression_id":"demo-imp-1"}}]}'`,
      ],
    },
    {
      routes: ['GET /sdk/v1/skan-schema'],
      lines: [
        "# The app's SKAN conversion-value schema, as the SDK reads it (signed over the empty body; 404 no_schema until `admin skan schema set`)",
        `sig=$(printf '' | ${hmac})`,
        `curl -i ${baseUrl}/sdk/v1/skan-schema ${appHeaders} -H "x-service-signature: $sig"`,
      ],
    },
    {
      routes: ['POST /sdk/v1/attribution', 'GET /sdk/v1/attribution'],
      lines: [
        '# What an Android app asks at first launch, with the Play install referrer (docs/deep-links.md), then reads back (GET: signed over the empty body)',
        ...signed(
          '/sdk/v1/attribution',
          `{"install_uuid":"${firstLaunch}","platform":"android","app_version":"1.0.0","sdk_version":"curl/1","install_referrer":"utm_source=demo&click_id=none"}`,
        ),
        'echo',
        `sig=$(printf '' | ${hmac})`,
        `curl -i '${baseUrl}/sdk/v1/attribution?install_uuid=${firstLaunch}' ${appHeaders} -H "x-service-signature: $sig"`,
      ],
    },
    {
      routes: [
        'POST /skan-postback',
        'POST /.well-known/skadnetwork/report-attribution',
        'POST /.well-known/appattribution/report-attribution',
      ],
      lines: [
        "# An Apple SKAN postback, signed with the key the local runtime trusts beside Apple's (run from the repository)",
        `pb=$(npx tsx sim/postback.ts --app-store-id ${DEMO_APP_STORE_ID} --ad-network-id example123.skadnetwork --fine 63)`,
        `curl -i ${baseUrl}/skan-postback --data "$pb"`,
        'echo',
        "# Apple's copy to the developer reaches the same handler on its well-known paths (the same postback: counted once)",
        `curl -i ${baseUrl}/.well-known/skadnetwork/report-attribution --data "$pb"`,
        'echo',
        `curl -i ${baseUrl}/.well-known/appattribution/report-attribution --data "$pb"`,
      ],
    },
  ];
}
