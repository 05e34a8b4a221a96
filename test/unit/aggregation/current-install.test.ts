// Issue 35, rules to decide: the current install of an install_uuid (docs/aggregation.md, "Most
// recent attribution") is the latest in time, not the latest counted. An older install counted
// later (a late batch, an offline SDK) does not become current, and the events after it count
// against the newer install.

import { APP, click, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UUID = '00000000-0000-4000-8000-000000000001';

describe('the current install of an install_uuid', () => {
  it('stays the newer install when an older one is counted after it', async () => {
    const w = world();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 + HOUR, partner: 'meta' }));
    w.clock.now = T0 + 2 * DAY;
    const newer = {
      event_id: 'i-new',
      event_name: 'install',
      install_uuid: UUID,
      ts_ms: T0 + 2 * HOUR,
      platform: 'ios',
      attribution: { click_id: 'c1' },
    };
    const older = { event_id: 'i-old', event_name: 'install', install_uuid: UUID, ts_ms: T0, platform: 'ios' };
    const purchase = { event_id: 'e-1', event_name: 'purchase', install_uuid: UUID, ts_ms: T0 + DAY, revenue_usd: 3 };
    await w.deliver([w.upload([newer])]);
    // The late batch: the older install, and a purchase after it in the same object.
    await w.deliver([w.upload([older, { ...purchase, event_id: 'e-0', revenue_usd: 1 }])]);
    await w.deliver([w.upload([purchase])]);
    expect(w.table().revenue).toEqual({ '2026-06-02|meta': { purchases: 2, revenue_micros: 4_000_000, payers: 1 } });
    const head = await w.installs.get<{ member: string }>(`${APP}#${UUID}`, 'head');
    expect(head?.member).toBe('i-new');
  });
});
