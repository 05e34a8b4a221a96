import type { DynamoInstallStore } from '../../../functions/adapters/install-store';
import { rebuildSource } from '../../../functions/adapters/rebuild-source';
import { PoisonMessageError } from '../../../functions/domain/aggregation/message';
import type { AttributionLookups } from '../../../functions/domain/attribution/decision';
import { AuditObjectError } from '../../../functions/domain/audit/decode';
import type { AuditObjects } from '../../../functions/domain/audit/ports';

const app = { app_id: 'app_1', company_id: 'com_1', probabilistic: false };
const sourceOf = (audit: AuditObjects) =>
  rebuildSource(app, {
    audit,
    installs: {} as DynamoInstallStore,
    lookups: {} as AttributionLookups,
    links: { byId: async () => undefined },
  });

describe('rebuildSource', () => {
  it("lists an app-day's audit objects under its prefix", async () => {
    const prefixes: string[] = [];
    const source = sourceOf({
      lines: async () => [],
      keys: async (prefix) => {
        prefixes.push(prefix);
        return [];
      },
    });
    await source.keysOfDay('2026-06-01');
    expect(prefixes).toEqual(['audit/2026/06/01/com_1/app_1/']);
  });

  it('gives a missing or unreadable object to the rebuild as the poison the aggregator takes it for', async () => {
    for (const reason of ['missing_object', 'unreadable_object'] as const) {
      const source = sourceOf({ lines: () => Promise.reject(new AuditObjectError(reason, 'k')), keys: async () => [] });
      const read = source.lines('k');
      await expect(read).rejects.toBeInstanceOf(PoisonMessageError);
      await expect(read).rejects.toMatchObject({ reason, message: `${reason}: k` });
    }
    const failure = new Error('SlowDown');
    await expect(sourceOf({ lines: () => Promise.reject(failure), keys: async () => [] }).lines('k')).rejects.toBe(failure);
  });
});
