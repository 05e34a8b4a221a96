import { z } from 'zod';
import { AggregateStore } from '../adapters/aggregate-store';
import { attributionLookups } from '../adapters/attribution-lookups';
import { AuditReader } from '../adapters/audit-reader';
import { ClickStore } from '../adapters/click-store';
import { DynamoInstallStore } from '../adapters/install-store';
import { IpBlockStore } from '../adapters/ip-block-store';
import { LinkStore } from '../adapters/link-store';
import { memoryRebuildStores } from '../adapters/memory/rebuild-stores';
import { PrivacyReceipts } from '../adapters/privacy-store';
import { liveRows, rebuildSource } from '../adapters/rebuild-source';
import { installReport } from '../domain/aggregation/install-report';
import { differences, type RebuiltRow, rebuildRows } from '../domain/aggregation/rebuild';
import { ROW_FAMILIES, ROW_GROUPS, rowId } from '../domain/aggregation/rows';
import { dayOf } from '../domain/common/days';
import { installHash } from '../domain/privacy/privacy';
import { tcfSummary } from '../domain/privacy/tcf-summary';
import { resourceName } from '../shared/config';
import { appByKey } from './apps';
import { defineCommand } from './command';
import { installUuid, key } from './flags';

/** What the service knows of one install: its attribution, its deletion receipts, and the rebuild of its app's rows. */
export const installCommands = [
  defineCommand({
    name: 'install show',
    usage: 'install show --app-key K --install-uuid U    (how the install was attributed, and why)',
    flags: z.object({ 'app-key': key, 'install-uuid': installUuid }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const items = await new DynamoInstallStore(resourceName.table('installs')).installItems(app.app_id, f['install-uuid']);
      const report = installReport(app.app_id, f['install-uuid'], items);
      // The TC string as a person reads it: its purposes and vendors (docs/privacy.md, "Consent").
      const tcf = report.consent?.tcf_string;
      return tcf === undefined ? report : { ...report, consent: { ...report.consent, tcf: tcfSummary(tcf) } };
    },
  }),
  defineCommand({
    name: 'privacy show',
    usage: 'privacy show --app-key K --install-uuid U    (the deletion receipts of an install and their state)',
    flags: z.object({ 'app-key': key, 'install-uuid': installUuid }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const receipts = await new PrivacyReceipts(resourceName.table('privacy_requests')).ofInstall(
        app.app_id,
        installHash(f['install-uuid']),
      );
      // The receipt names the install by its hash only; the CLI was given the uuid and says which.
      return {
        app_id: app.app_id,
        install_hash: installHash(f['install-uuid']),
        receipts: receipts.map(({ app_install: _key, ...receipt }) => receipt),
      };
    },
  }),
  defineCommand({
    name: 'rebuild',
    usage:
      "rebuild --app-key K [--apply]                (recomputes the app's report rows from the audit store and\n" +
      '                                              lists the rows that differ; --apply writes the recomputed ones)',
    flags: z.object({ 'app-key': key, apply: z.boolean().optional() }),
    booleanFlags: ['apply'],
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const installs = new DynamoInstallStore(resourceName.table('installs'));
      const lookups = attributionLookups({
        clicks: new ClickStore(resourceName.table('clicks')),
        ipBlocks: new IpBlockStore(resourceName.table('ip_blocks')),
        installs,
      });
      const source = rebuildSource(app, {
        audit: new AuditReader(resourceName.bucket()),
        installs,
        lookups,
        links: new LinkStore(resourceName.table('links')),
      });
      const rebuilt = await rebuildRows(source, dayOf(app.created_ms), dayOf(Date.now()), memoryRebuildStores());
      const aggregates = new AggregateStore(resourceName.table('aggregates'));
      const live = await liveRows(aggregates, app.app_id);
      const found = differences(live, rebuilt.rows);
      // Rows the live side has and the rebuild does not are set to zero, as if never written.
      for (const row of f.apply ? found : []) {
        await aggregates.setCounters(app.app_id, {
          family: row.family,
          day: row.day,
          group: ROW_GROUPS[row.family].map((column) => {
            const value = row.group[column];
            if (value === undefined) throw new Error(`rebuilt ${row.family} row of ${row.day} has no ${column}`);
            return value;
          }),
          add: row.rebuilt ?? {},
        });
      }
      // The day pages the reports read follow the rows they were set from.
      for (const family of ROW_FAMILIES) {
        const days = [...new Set((f.apply ? found : []).filter((row) => row.family === family).map((row) => row.day))];
        await aggregates.refreshPages(app.app_id, family, days);
      }
      const rowKey = (row: RebuiltRow) => rowId({ family: row.family, day: row.day, group: Object.values(row.group) });
      return {
        app_id: app.app_id,
        objects: rebuilt.objects,
        events: rebuilt.events,
        unreadable: rebuilt.unreadable,
        rows_compared: new Set([...live, ...rebuilt.rows].map(rowKey)).size,
        differences: found,
        applied: Boolean(f.apply),
      };
    },
  }),
];
