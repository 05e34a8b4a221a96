// Issue 23, item 1: an app's time zone, set with `admin app create|update --time-zone`, makes the
// report days its local days: events sent through POST /event, aggregated by the local runtime's
// aggregator, read through GET /api/v1/reports/{report} (docs/reports.md, "Time zones").
//
// The service refuses events more than 90 days old, so the Berlin case takes the local day of
// Berlin's latest daylight-saving change when it lies within the last 80 days (23 or 25 hours
// long), else the local day three days ago; the aggregator-level tests
// (test/unit/aggregation/time-zones.test.ts) hold both changes of 2026 at any date.

import { runAdmin, UsageError } from '../../bin/admin';
import { EventClient, type SdkEvent } from '../../client/event-client';
import { localDayOf, localDayStartMs, nextDay } from '../../functions/domain/common/days';
import { type LocalStack, startLocalStack } from '../support/local-stack';

jest.setTimeout(120_000);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** The oracle for Berlin's offset: Intl's own "GMT+1"/"GMT+2" name, not days.ts's arithmetic. */
const berlinOffset = (ms: number) =>
  new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', timeZoneName: 'shortOffset' })
    .formatToParts(ms)
    .find((p) => p.type === 'timeZoneName')?.value;

/** The Berlin local day to test: that of the latest offset change within 80 days, else three days ago. */
function berlinDay(nowMs: number): string {
  const from = nowMs - 2 * DAY;
  for (let ms = from; ms > nowMs - 80 * DAY; ms -= HOUR) {
    if (berlinOffset(ms) !== berlinOffset(ms - HOUR)) return localDayOf(ms, 'Europe/Berlin');
  }
  return localDayOf(nowMs - 3 * DAY, 'Europe/Berlin');
}

interface AppUnderTest {
  client: EventClient;
  serverKey: string;
}

async function createApp(companyKey: string, name: string, flags: string[]): Promise<AppUnderTest & { appKey: string }> {
  const app = (await runAdmin(['app', 'create', '--company-key', companyKey, '--name', name, ...flags])) as {
    app_key: string;
    signing_secret: string;
  };
  const { server_key } = (await runAdmin(['server-key', 'create', '--app-key', app.app_key])) as { server_key: string };
  const client = new EventClient({ baseUrl: stack.baseUrl, companyKey, appKey: app.app_key, signingSecret: app.signing_secret });
  return { appKey: app.app_key, client, serverKey: server_key };
}

let sequence = 0;
/** An install at each instant, each with a purchase a minute later, sent and aggregated. */
async function installsAt(app: AppUnderTest, instants: readonly number[]): Promise<void> {
  const events: SdkEvent[] = instants.flatMap((tsMs) => {
    const n = ++sequence;
    const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    return [
      { event_id: `i-${n}`, event_name: 'install', install_uuid: uuid, ts_ms: tsMs, platform: 'ios' },
      { event_id: `p-${n}`, event_name: 'purchase', install_uuid: uuid, ts_ms: tsMs + 60_000, revenue_usd: 1 },
    ];
  });
  const result = await app.client.sendEvents(events);
  expect(result).toMatchObject({ rejected: 0 });
  await stack.pollers.drain();
}

async function report(app: AppUnderTest, name: string, sinceMs: number, untilMs: number): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${stack.baseUrl}/api/v1/reports/${name}?since_ms=${sinceMs}&until_ms=${untilMs}`, {
    headers: { authorization: `Bearer ${app.serverKey}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { rows: Record<string, unknown>[] }).rows;
}

const days = (rows: readonly Record<string, unknown>[], counter: string) => Object.fromEntries(rows.map((row) => [row.day, row[counter]]));

describe('report days in the app time zone, through the local stack', () => {
  let tokyo: AppUnderTest;
  let berlin: AppUnderTest & { appKey: string };

  beforeAll(async () => {
    const { company_key } = (await runAdmin(['company', 'create', '--name', 'Zones Co'])) as { company_key: string };
    tokyo = await createApp(company_key, 'Tokyo', ['--time-zone', 'Asia/Tokyo']);
    // Created in UTC, then moved to Berlin before any of its data is aggregated.
    berlin = await createApp(company_key, 'Berlin', []);
    expect(await runAdmin(['app', 'show', '--app-key', berlin.appKey])).toMatchObject({ time_zone: 'UTC' });
    expect(await runAdmin(['app', 'update', '--app-key', berlin.appKey, '--time-zone', 'Europe/Berlin'])).toMatchObject({
      time_zone: 'Europe/Berlin',
    });
    expect(await runAdmin(['app', 'show', '--app-key', berlin.appKey])).toMatchObject({ time_zone: 'Europe/Berlin', name: 'Berlin' });
  });

  it('refuses a time zone Intl does not know, naming the flag', async () => {
    const refused = runAdmin(['app', 'update', '--app-key', berlin.appKey, '--time-zone', 'Europe/Atlantis']);
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(refused).rejects.toThrow('--time-zone must be an IANA time zone');
    expect(await runAdmin(['app', 'show', '--app-key', berlin.appKey])).toMatchObject({ time_zone: 'Europe/Berlin' });
  });

  it('counts an install at 23:30 UTC on the next local day of an app in Asia/Tokyo, in attribution and cohorts', async () => {
    const utcDay = new Date(Date.now() - 3 * DAY).toISOString().slice(0, 10);
    const tokyoDay = nextDay(utcDay);
    await installsAt(tokyo, [Date.parse(`${utcDay}T23:30:00Z`)]);
    // The Tokyo day after the UTC day D is [D 15:00Z, D+1 15:00Z).
    const start = Date.parse(`${utcDay}T15:00:00Z`);
    expect(await report(tokyo, 'attribution', start, start + DAY)).toEqual([
      { day: tokyoDay, partner: 'organic', attribution_type: 'organic', installs: 1, organic: 1, reinstalls: 0, fraud_flagged: 0 },
    ]);
    expect(await report(tokyo, 'cohorts', start, start + DAY)).toEqual([
      { day: tokyoDay, installs: 1, d1: 0, d7: 0, d30: 0, d1_rate: 0, d7_rate: 0, d30_rate: 0 },
    ]);
    expect(await report(tokyo, 'attribution', start - DAY, start)).toEqual([]);
  });

  it('puts Europe/Berlin installs on their local days, and a window covers the local days it overlaps', async () => {
    const day = berlinDay(Date.now());
    const dayStart = localDayStartMs(day, 'Europe/Berlin');
    const dayEnd = localDayStartMs(nextDay(day), 'Europe/Berlin');
    // Local midnight by Intl's offset: UTC midnight less the offset in force just after it.
    const offsetHours = Number(berlinOffset(dayStart)?.replace('GMT', ''));
    expect(dayStart).toBe(Date.parse(`${day}T00:00:00Z`) - offsetHours * HOUR);
    const length = (dayEnd - dayStart) / HOUR;
    expect([23, 24, 25]).toContain(length);
    const previous = localDayOf(dayStart - 1, 'Europe/Berlin');
    const following = nextDay(day);
    await installsAt(berlin, [dayStart - 2 * 60_000, dayStart, dayEnd - 2 * 60_000, dayEnd]);
    expect(days(await report(berlin, 'attribution', dayStart, dayEnd), 'installs')).toEqual({ [day]: 2 });
    expect(days(await report(berlin, 'cohorts', dayStart, dayEnd), 'installs')).toEqual({ [day]: 2 });
    expect(days(await report(berlin, 'revenue', dayStart, dayEnd), 'purchases')).toEqual({ [day]: 2 });
    // A millisecond beyond either bound reaches the day on that side.
    expect(days(await report(berlin, 'cohorts', dayStart - 1, dayEnd + 1), 'installs')).toEqual({
      [previous]: 1,
      [day]: 2,
      [following]: 1,
    });
    // 24 hours from the start: within a 25-hour day, into the next after a 23-hour one.
    expect(days(await report(berlin, 'cohorts', dayStart, dayStart + DAY), 'installs')).toEqual(
      length === 23 ? { [day]: 2, [following]: 1 } : { [day]: 2 },
    );
  });
});
