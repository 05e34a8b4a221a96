// Issue 35, the click TTL rule: in AWS a click is deleted by TTL some time after its stored
// `expires_at`, but ingestion accepts events up to 90 days old, so an install made inside its
// click's window can be counted long after the window closed (an SDK offline for a week, a retried
// batch). The rule: the stored `expires_at` (the table's TTL attribute) is the claim deadline (the
// click's time plus the link's lookback) plus the longest accepted event age and a day, and
// attribution applies the lookback from the click's time itself, never from `expires_at`. dynalite
// never expires items, so these tests run the expiry: at each delivery, clicks whose expires_at
// has passed are gone, as DynamoDB's TTL may have made them.

import { MAX_PAST_AGE_MS } from '../../../functions/domain/ingest/event-validation';
import { buildClick, CLICK_KEPT_AFTER_CLAIM_S, type ClickRecord, claimDeadline } from '../../../functions/domain/links/click';
import { clientAddress } from '../../../functions/domain/links/ip-block';
import { clickRow } from '../../../functions/domain/raw-data/export-rows';
import { APP, COMPANY, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LOOKBACK_DAYS = 7;

const clickAt = (tsMs: number): ClickRecord =>
  buildClick({
    clickId: 'c-late',
    link: { link_id: 'link-1', app_id: APP, company_id: COMPANY, partner: 'meta', lookback_days: LOOKBACK_DAYS },
    address: clientAddress('198.51.100.7'),
    userAgent: 'ua',
    platform: 'ios',
    query: {},
    nowMs: tsMs,
  });

/** An install made at `installMs` naming the click, counted at `countedMs` after TTL deleted what it could. */
async function countedLate(installMs: number, countedMs: number) {
  const w = world();
  const clicked = clickAt(T0 - HOUR);
  w.clicks.set(clicked.click_id, clicked);
  w.clock.now = countedMs;
  for (const [id, click] of w.clicks) if (click.expires_at * 1000 <= w.clock.now) w.clicks.delete(id);
  const install = {
    event_id: 'i-1',
    event_name: 'install',
    install_uuid: '00000000-0000-4000-8000-000000000001',
    ts_ms: installMs,
    platform: 'ios',
    attribution: { click_id: 'c-late' },
  };
  // Received when counted: ingestion accepts it as long as it is at most MAX_PAST_AGE_MS old.
  await w.deliver([w.upload([install], { receivedMs: countedMs })]);
  return w.table().attribution;
}

describe('an install counted after its click expired by TTL', () => {
  it('is still attributed to the click it was made within the lookback of, counted ten days later', async () => {
    expect(await countedLate(T0, T0 + 10 * DAY)).toEqual({ '2026-06-01|meta|deterministic': { installs: 1 } });
  });

  it('is still attributed when made at the end of the lookback and counted at the oldest age ingestion accepts', async () => {
    const installMs = T0 - HOUR + LOOKBACK_DAYS * DAY - 1_000;
    const day = new Date(installMs).toISOString().slice(0, 10);
    expect(await countedLate(installMs, installMs + MAX_PAST_AGE_MS)).toEqual({ [`${day}|meta|deterministic`]: { installs: 1 } });
  });

  it('is organic when made after the lookback, although the click is still stored', async () => {
    const installMs = T0 - HOUR + LOOKBACK_DAYS * DAY + 1_000;
    const day = new Date(installMs).toISOString().slice(0, 10);
    expect(await countedLate(installMs, installMs + HOUR)).toEqual({ [`${day}|organic|organic`]: { installs: 1, organic: 1 } });
  });
});

describe("a click's times", () => {
  it('keeps the click the longest accepted event age and a day past its claim deadline, which the export shows', () => {
    const click = clickAt(T0 + 999);
    const deadline = Math.floor(T0 / 1000) + LOOKBACK_DAYS * 86_400;
    expect(claimDeadline(click)).toBe(deadline);
    expect(click.expires_at).toBe(deadline + 90 * 86_400 + 86_400);
    expect(CLICK_KEPT_AFTER_CLAIM_S).toBe(91 * 86_400);
    expect(clickRow(click).expires_at).toBe(deadline);
  });

  it('takes a click recorded before lookback_days was kept at its stored expires_at, which was its claim deadline', () => {
    const { lookback_days: _lookback, ...old } = clickAt(T0);
    const legacy = { ...old, expires_at: Math.floor(T0 / 1000) + 3 * 86_400 };
    expect(claimDeadline(legacy)).toBe(legacy.expires_at);
    expect(clickRow(legacy).expires_at).toBe(legacy.expires_at);
  });
});
