import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventClient } from './event-client';

// `npx tsx client/example.ts`, with `npm start` running: a session of the demo install, sent as the
// demo app. npm start keeps the demo's keys and its own address in its data directory (DATA_DIR).
async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR || '.data';
  const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
    company_key: string;
    app_key: string;
    signing_secret: string;
  };
  const { base_url } = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as { base_url: string };

  const client = new EventClient({
    baseUrl: base_url,
    companyKey: demo.company_key,
    appKey: demo.app_key,
    signingSecret: demo.signing_secret,
  });
  const result = await client.sendEvents([
    { event_id: 'ts-1', event_name: 'session', install_uuid: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f', ts_ms: Date.now(), platform: 'ios' },
  ]);
  console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
