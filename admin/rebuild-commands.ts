import { z } from 'zod';
import { AggregateStore } from '../functions/adapters/aggregate-store';
import { attributionLookups } from '../functions/adapters/attribution-lookups';
import { AuditReader } from '../functions/adapters/audit-reader';
import { ClickStore } from '../functions/adapters/click-store';
import { DynamoInstallStore } from '../functions/adapters/install-store';
import { IpBlockStore } from '../functions/adapters/ip-block-store';
import { LinkStore } from '../functions/adapters/link-store';
import { memoryRebuildStores } from '../functions/adapters/memory/rebuild-stores';
import { liveRows, rebuildSource } from '../functions/adapters/rebuild-source';
import { appByKey } from '../functions/commands/apps';
import { defineCommand } from '../functions/commands/command';
import { key } from '../functions/commands/flags';
import { differences, type RebuiltRow, rebuildRows } from '../functions/domain/aggregation/rebuild';
import { ROW_FAMILIES, ROW_GROUPS, rowId } from '../functions/domain/aggregation/rows';
import { dayOf } from '../functions/domain/common/days';
import { clickTables } from '../functions/shared/click-tables';
import { resourceName } from '../functions/shared/config';

/**
 * The rebuild of an app's rows from the audit store: the operator's, from the CLI only. It reads
 * the app's whole history, which takes longer than the console API's 29 s (API Gateway's limit),
 * so the deployed console does not serve it (docs/adr/0007, "Commands and grants").
 */
export const rebuildCommands = [
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
        clicks: new ClickStore(clickTables()),
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
