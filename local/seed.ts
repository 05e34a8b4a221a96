import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LinkStore } from '../functions/adapters/link-store';
import { SigningSecretStore } from '../functions/adapters/signing-secret-store';
import { TenantStore } from '../functions/adapters/tenant-store';
import { type FunctionSpec, functions } from '../lib/manifest';

/** The demo tenant a first `npm start` creates, so a newcomer can send an event at once. */
export interface Demo {
  company_id: string;
  company_key: string;
  app_id: string;
  app_key: string;
  signing_secret: string;
  server_key: string;
  link_id: string;
  link_url: string;
}

export async function seedDemo(
  dataDir: string,
  names: { tenants: string; signing_secrets: string; links: string },
  baseUrl: string,
): Promise<{ demo: Demo; created: boolean }> {
  const file = join(dataDir, 'demo.json');
  if (existsSync(file)) return { demo: JSON.parse(readFileSync(file, 'utf8')) as Demo, created: false };
  const tenants = new TenantStore(names.tenants, new SigningSecretStore(names.signing_secrets));
  const company = await tenants.createCompany({ name: 'Demo Company' });
  const app = await tenants.createApp({
    companyKey: company.company_key,
    name: 'Demo App',
    ios_url: 'https://apps.apple.com/app/id1234567890',
    android_url: 'https://play.google.com/store/apps/details?id=com.example.demo',
    web_url: 'https://example.com/demo',
  });
  const { serverKey } = await tenants.createServerKey(app.app_key);
  const link = await new LinkStore(names.links).create(app, { partner: 'demo_network', campaign: 'launch' });
  const demo: Demo = {
    company_id: company.company_id,
    company_key: company.company_key,
    app_id: app.app_id,
    app_key: app.app_key,
    signing_secret: app.signing_secret,
    server_key: serverKey,
    link_id: link.link_id,
    link_url: `${baseUrl}/l/${link.link_id}`,
  };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return { demo, created: true };
}

const routeKeys = new Set(Object.values(functions as Record<string, FunctionSpec>).flatMap((f) => f.routes ?? []));

/** Ready-to-paste curl commands for every endpoint the manifest serves, with the demo credentials filled in. */
export function demoCurls(demo: Demo, baseUrl: string): string {
  const now = '$(date +%s000)';
  const install = '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f';
  const signed = (path: string, body: string) => [
    `body='${body}'`,
    `sig=$(printf '%s' "$body" | openssl dgst -sha256 -hmac '${demo.signing_secret}' | sed 's/^.* //')`,
    `curl -i ${baseUrl}${path} -H 'content-type: application/json' \\`,
    `  -H 'x-service-company-key: ${demo.company_key}' -H 'x-service-app-key: ${demo.app_key}' \\`,
    `  -H "x-service-signature: $sig" --data-binary "$body"`,
  ];
  const sections: [string, string[]][] = [
    ['GET /health', ['# Health', `curl -i ${baseUrl}/health`]],
    [
      'POST /event',
      [
        "# Send an event batch (signed with the app's signing secret)",
        ...signed(
          '/event',
          `{"sent_at_ms":'${now}',"events":[{"event_id":"e-1","event_name":"install","install_uuid":"${install}","ts_ms":'${now}',"platform":"ios"}]}`,
        ),
      ],
    ],
    [
      'GET /l/{link_id}',
      [
        '# Click the demo tracking link as an iPhone',
        `curl -i '${demo.link_url}?click_id=abc123&sub1=creative_a' -A 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'`,
      ],
    ],
    ['POST /privacy/delete', ["# Ask for the install's data to be deleted", ...signed('/privacy/delete', `{"install_uuid":"${install}"}`)]],
    [
      'GET /api/v1/reports/attribution',
      ['# Read a report', `curl -s ${baseUrl}/api/v1/reports/attribution -H 'authorization: Bearer ${demo.server_key}'`],
    ],
  ];
  return sections
    .filter(([route]) => routeKeys.has(route))
    .map(([, lines]) => lines.join('\n'))
    .join('\n\n');
}
