// Issue 35, rules to decide (not settled yet): in AWS a click expires by TTL at `expires_at`
// (its time plus the link's lookback; DynamoDB deletes it some time after), but ingestion accepts
// events up to 90 days old. An install made inside its click's window that arrives after the
// click was deleted (an SDK offline for a week, a retried batch) finds no click. dynalite never
// expires items, so this test runs the expiry itself: at each delivery, clicks whose expires_at
// has passed are gone, as DynamoDB's TTL may have made them.
//
// The test reproduces the open rule and is marked `it.failing` until the next session decides it
// (docs/notes/issue-35-progress.md, "The click TTL rule").

import { buildClick } from '../../../functions/domain/links/click';
import { clientAddress } from '../../../functions/domain/links/ip-block';
import { APP, COMPANY, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('an install counted after its click expired by TTL', () => {
  it.failing('REPRODUCES ISSUE 35 (click TTL): is still attributed to the click it was made within the lookback of', async () => {
    const w = world();
    const clicked = buildClick({
      clickId: 'c-late',
      link: { link_id: 'link-1', app_id: APP, company_id: COMPANY, partner: 'meta', lookback_days: 7 },
      address: clientAddress('198.51.100.7'),
      userAgent: 'ua',
      platform: 'ios',
      query: {},
      nowMs: T0 - HOUR,
    });
    w.clicks.set(clicked.click_id, clicked);
    // The SDK was offline: the install made an hour after the click arrives ten days later.
    w.clock.now = T0 + 10 * DAY;
    for (const [id, click] of w.clicks) if (click.expires_at * 1000 <= w.clock.now) w.clicks.delete(id);
    const install = {
      event_id: 'i-1',
      event_name: 'install',
      install_uuid: '00000000-0000-4000-8000-000000000001',
      ts_ms: T0,
      platform: 'ios',
    };
    await w.deliver([w.upload([{ ...install, attribution: { click_id: 'c-late' } }])]);
    expect(w.table().attribution).toEqual({ '2026-06-01|meta|deterministic': { installs: 1 } });
  });
});
