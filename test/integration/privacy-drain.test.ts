// The nightly privacy drain over the emulators: a deleted install leaves nothing in any table or
// in the audit store, other installs and the reports stay as they were, requests go 25 a batch,
// and an install with more than 1,000 rows takes a second run.

import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalStack, createTenant, type LocalStack, type Tenant } from '../support/local-stack';
import { eventClientFrom } from '../support/event-client';
import { LinkStore } from '../../functions/adapters/link-store';
import { AuditReader } from '../../functions/adapters/audit-reader';
import { runAdmin } from '../../bin/admin';
import { dynamoClient, s3Client } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import type { DrainReport } from '../../functions/domain/privacy/drain';
import { MOBILE } from '../unit/links/user-agents';

let stack: LocalStack;
let tenant: Tenant;
beforeAll(async () => {
  process.env.KEY_CACHE_TTL_MS = '0';
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant();
});
afterAll(async () => {
  await stack?.stop();
});

const uuid = (n: number) => `${String(n).padStart(8, '0')}-aaaa-4bbb-8ccc-dddddddddddd`;
const client = (ip = '198.51.100.30') => eventClientFrom(stack.baseUrl, tenant, ip);
const drain = async () => (await stack.scheduler.run('privacy-drain')) as DrainReport;

async function scan(table: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await dynamoClient().send(new ScanCommand({ TableName: resourceName.table(table as never) }));
  return Items;
}

async function auditTexts(): Promise<Map<string, string>> {
  const reader = new AuditReader(resourceName.bucket());
  const { Contents = [] } = await s3Client().send(new ListObjectsV2Command({ Bucket: resourceName.bucket(), Prefix: 'audit/' }));
  const texts = new Map<string, string>();
  for (const { Key } of Contents) texts.set(Key!, JSON.stringify(await reader.lines(Key!)));
  return texts;
}

const reports = async () => {
  const out: Record<string, unknown> = {};
  for (const name of ['attribution', 'revenue', 'cohorts', 'events']) {
    const response = await fetch(`${stack.baseUrl}/api/v1/reports/${name}`, { headers: { authorization: `Bearer ${tenant.serverKey}` } });
    out[name] = ((await response.json()) as { rows: unknown }).rows;
  }
  return out;
};

describe('the privacy drain', () => {
  it('removes every row, click and audit line of the install and touches nothing else', async () => {
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'meta' });
    const clickOf = async (ip: string) => {
      const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, { redirect: 'manual', headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip } });
      return new URL(response.headers.get('location')!).searchParams.get('click_id')!;
    };
    const matched = await clickOf('203.0.113.1');
    const unrelated = await clickOf('203.0.113.2');
    const [gone, kept] = [uuid(1), uuid(2)];
    const now = Date.now();
    // An object of the deleted install only, one shared with another install, one with a rejected line of it.
    const alone = await client().sendEvents([
      { event_id: 'i', event_name: 'install', install_uuid: gone, ts_ms: now, platform: 'ios', device_id: 'idfv-gone', attribution: { click_id: matched } },
      { event_id: 'p', event_name: 'purchase', install_uuid: gone, ts_ms: now + 1000, revenue_usd: 9.99 },
    ]);
    const shared = await client().sendEvents([
      { event_id: 's', event_name: 'session', install_uuid: gone, ts_ms: now + 2000 },
      { event_id: 'i', event_name: 'install', install_uuid: kept, ts_ms: now, platform: 'android' },
      { event_id: 's2', event_name: 'session', install_uuid: kept, ts_ms: now + 3000 },
    ]);
    const rejected = await client().sendEvents([
      { event_id: 'bad', event_name: 'purchase', install_uuid: gone, ts_ms: now, revenue_usd: -5 },
      { event_id: 's3', event_name: 'session', install_uuid: kept, ts_ms: now + 4000 },
    ]);
    expect(rejected.rejected).toBe(1);
    await stack.pollers.drain();
    const before = await reports();
    expect((before.attribution as unknown[]).length).toBeGreaterThan(0);
    const installsBefore = (await scan('installs')).filter((item) => String(item.pk).endsWith(kept));
    expect((await scan('installs')).some((item) => String(item.pk).endsWith(gone))).toBe(true);

    await client().deleteInstall(gone.toUpperCase());
    const report = await drain();
    expect(report).toMatchObject({ failed: [] });
    expect(report.done).toHaveLength(1);
    expect(report.stopped).toBe('queue_empty');

    // Nothing keyed to the install is left: no item, no matched click, no audit line.
    expect((await scan('installs')).filter((item) => JSON.stringify(item).includes(gone))).toEqual([]);
    const clickIds = (await scan('clicks')).map((click) => click.click_id);
    expect(clickIds).not.toContain(matched);
    expect(clickIds).toContain(unrelated);
    const texts = await auditTexts();
    expect([...texts.values()].filter((text) => text.includes(gone))).toEqual([]);
    expect(texts.has(alone.audit_key)).toBe(false);
    expect(JSON.parse(texts.get(shared.audit_key)!).map((line: { event: { event_id: string } }) => line.event.event_id)).toEqual(['i', 's2']);
    expect(JSON.parse(texts.get(rejected.audit_key)!).map((line: { event: { event_id: string } }) => line.event.event_id)).toEqual(['s3']);

    // The other install and the anonymous counts are as they were.
    expect((await scan('installs')).filter((item) => String(item.pk).endsWith(kept))).toEqual(installsBefore);
    expect(await reports()).toEqual(before);

    const shown = await runAdmin(['privacy', 'show', '--app-key', tenant.app.app_key, '--install-uuid', gone]);
    expect(shown.receipts).toEqual([
      expect.objectContaining({
        state: 'done',
        started_ms: expect.any(Number),
        finished_ms: expect.any(Number),
        deleted_clicks: 1,
        deleted_audit_objects_deleted: 1,
        deleted_audit_objects_rewritten: 2,
        deleted_audit_lines: 4,
      }),
    ]);
    expect(JSON.stringify(shown)).not.toContain(gone);
  });

  it('takes requests 25 a batch until the queue is empty: 60 requests in 3 batches', async () => {
    for (let n = 100; n < 160; n++) await client().deleteInstall(uuid(n));
    const report = await drain();
    expect(report.batches).toEqual([25, 25, 10]);
    expect(report.done).toHaveLength(60);
    expect((await drain()).batches).toEqual([]);
  });

  it('deletes at most 1,000 rows of a table per request and run, and finishes the rest on the next run', async () => {
    const big = uuid(7);
    const now = Date.now();
    const events = (from: number) => Array.from({ length: 600 }, (_, i) => ({ event_id: `e${from + i}`, event_name: 'level_up', install_uuid: big, ts_ms: now + from + i }));
    await client().sendEvents([{ event_id: 'i', event_name: 'install', install_uuid: big, ts_ms: now, platform: 'ios' }]);
    await client().sendEvents(events(0));
    await client().sendEvents(events(600));
    await stack.pollers.drain();
    const rowsOf = async () => (await scan('installs')).filter((item) => String(item.pk).endsWith(big)).length;
    expect(await rowsOf()).toBeGreaterThan(1200);

    await client().deleteInstall(big);
    const first = await drain();
    expect(first.carried).toHaveLength(1);
    const left = await rowsOf();
    expect(left).toBeGreaterThan(200);
    expect(left).toBeLessThan(1000);
    const receipt = async () => ((await runAdmin(['privacy', 'show', '--app-key', tenant.app.app_key, '--install-uuid', big])).receipts as Record<string, unknown>[])[0];
    expect(await receipt()).toMatchObject({ state: 'in_progress', deleted_install_items: 1000 });

    const second = await drain();
    expect(second.done).toEqual(first.carried);
    expect(await rowsOf()).toBe(0);
    expect(await receipt()).toMatchObject({ state: 'done', deleted_install_items: 1000 + left });
    expect([...(await auditTexts()).values()].filter((text) => text.includes(big))).toEqual([]);
  });
});
