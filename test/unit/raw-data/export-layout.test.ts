import fc from 'fast-check';
import { appHourKey } from '../../../functions/domain/links/click';
import { CLICK_LOG_SHARDS, clickLogKey, newClickId } from '../../../functions/domain/links/click-log-key';
import {
  checkpointKey,
  exportFileKey,
  HOUR_MS,
  hourOf,
  hourStartMs,
  hoursFrom,
  isExportHour,
} from '../../../functions/domain/raw-data/export-layout';

describe('the export’s layout', () => {
  it('names a partition’s one file with Hive-style folders of the UTC receive hour', () => {
    expect(exportFileKey('events', 'app_1', '2026-03-10T09')).toBe('events/app_id=app_1/dt=2026-03-10/hour=09/part-00000.parquet');
    expect(exportFileKey('skan_postbacks', '_unmatched', '2026-12-31T23')).toBe(
      'skan_postbacks/app_id=_unmatched/dt=2026-12-31/hour=23/part-00000.parquet',
    );
    expect(checkpointKey('app_1')).toBe('_export/app_1.json');
  });

  it('takes only a real UTC hour as YYYY-MM-DDTHH', () => {
    expect(['2026-03-10T09', '2024-02-29T00', '2026-12-31T23'].map(isExportHour)).toEqual([true, true, true]);
    expect(['2026-02-30T10', '2026-03-10T24', '2026-03-10 09', '2026-03-10T9', '2026-03-10T09:00'].map(isExportHour)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('lists every hour from one instant’s to another’s, both included', () => {
    const start = Date.UTC(2026, 2, 10, 22, 30);
    expect(hoursFrom(start, start + 2 * HOUR_MS)).toEqual(['2026-03-10T22', '2026-03-10T23', '2026-03-11T00']);
    expect(hoursFrom(start, start - 1)).toEqual([]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), (ms) => {
        expect(hourStartMs(hourOf(ms)) <= ms && ms < hourStartMs(hourOf(ms)) + HOUR_MS).toBe(true);
      }),
    );
  });

  it('keys a click in click_log by its app, UTC hour and one of 4 shards, spread by its address and platform', () => {
    const tsMs = Date.UTC(2026, 2, 10, 9, 59, 59, 999);
    const shards = new Set<string>();
    for (let n = 0; n < 400; n++) {
      const clickId = newClickId({ tsMs, appIpPlatform: `app_1#10.0.${n >> 8}.${n & 255}#ios` });
      const pk = clickLogKey('app_1', clickId)?.pk ?? '';
      const [app, hour, shard = ''] = pk.split('#');
      expect([app, hour, CLICK_LOG_SHARDS.includes(shard)]).toEqual(['app_1', '2026-03-10T09', true]);
      expect(pk).toBe(appHourKey('app_1', '2026-03-10T09', shard));
      shards.add(shard);
    }
    expect(shards.size).toBe(CLICK_LOG_SHARDS.length);
  });
});
