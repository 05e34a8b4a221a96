// Tracking-link management through the local stack (docs/tracking-links.md, "Changing and
// disabling a link" and "Link stats"): links made, changed, disabled and enabled with the admin
// commands (runAdmin, as the CLI and the console run them), clicks through GET /l/{link_id},
// installs naming them through POST /event, aggregated by the runtime's poller, and `link stats`
// held to what the test itself sent.

import { runAdmin } from '../../bin/admin';
import { EventClient } from '../../client/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { sleep } from '../support/wait-for';
import { DESKTOP, MOBILE } from '../unit/links/user-agents';

/**
 * The redirect's link cache, short (30 s in AWS): a change is seen once it has run out, as there.
 * The test waits it out with fixed sleeps, not a poll: a visit made to look would record a click.
 */
const CACHE_MS = 1_000;

let stack: LocalStack;
let tenant: Tenant;
beforeAll(async () => {
  process.env.LINK_CACHE_TTL_MS = String(CACHE_MS);
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant({ app: { timeZone: 'America/Los_Angeles' } });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  delete process.env.LINK_CACHE_TTL_MS;
});

const admin = (...argv: string[]) => runAdmin(argv) as Promise<Record<string, unknown>>;

let address = 0;
/** One visit of the link, from an address of its own (the rate limit never comes into it). */
async function visit(linkId: string, userAgent: string = MOBILE.iosSafari) {
  const response = await fetch(`${stack.baseUrl}/l/${linkId}`, {
    redirect: 'manual',
    headers: { 'user-agent': userAgent, 'x-forwarded-for': `10.91.${Math.floor(++address / 200)}.${address % 200}` },
  });
  const location = response.headers.get('location');
  return {
    status: response.status,
    body: await response.text(),
    location,
    clickId: location ? new URL(location).searchParams.get('click_id') : null,
  };
}

interface Stats {
  app_id: string;
  links: { link_id: string; clicks: number; installs: number }[];
}

describe('tracking-link management', () => {
  it('counts clicks and attributed installs per link, stops a disabled link and follows a changed one', async () => {
    const startedMs = Date.now();
    const create = async (partner: string) =>
      (await admin('link', 'create', '--app-key', tenant.app.app_key, '--partner', partner, '--campaign', 'spring')).link_id as string;
    const a = await create('acme_ads');
    const b = await create('bolt_media');
    const clicks: Record<string, string[]> = { [a]: [], [b]: [] };
    const click = async (linkId: string) => {
      const answer = await visit(linkId);
      expect(answer.status).toBe(302);
      clicks[linkId]?.push(String(answer.clickId));
    };
    for (const linkId of [a, a, a, b, b]) await click(linkId);

    // Disabled: answered as an unknown link, nothing recorded; enabled: redirects again.
    expect(await admin('link', 'disable', '--link-id', a)).toEqual({ link_id: a, disabled: true });
    await sleep(CACHE_MS + 200);
    const refused = await visit(a);
    expect(refused).toMatchObject({ status: 404, location: null });
    expect(JSON.parse(refused.body)).toEqual({ error: 'unknown_link' });
    const listed = (await admin('link', 'list', '--app-key', tenant.app.app_key)).links as { link_id: string; disabled: boolean }[];
    expect(listed.map((link) => [link.link_id, link.disabled])).toEqual([
      [a, true],
      [b, false],
    ]);
    const tried = (await admin('link', 'try', '--link-id', a)).clicks as { status: number }[];
    expect(tried.map((trial) => trial.status)).toEqual([404, 404, 404]);
    expect(await admin('link', 'enable', '--link-id', a)).toEqual({ link_id: a, disabled: false });
    await sleep(CACHE_MS + 200);
    await click(a);

    // A changed destination is what the redirect sends to once its cached copy has run out.
    const updated = await admin('link', 'update', '--link-id', b, '--web-url', 'https://example.org/landing', '--campaign', '');
    expect(updated).toMatchObject({ link_id: b, partner: 'bolt_media', web_url: 'https://example.org/landing', disabled: false });
    expect(updated.campaign).toBeUndefined();
    await sleep(CACHE_MS + 200);
    const desktop = await visit(b, DESKTOP.chromeWindows);
    expect(desktop.status).toBe(302);
    expect(new URL(String(desktop.location)).origin + new URL(String(desktop.location)).pathname).toBe('https://example.org/landing');
    clicks[b]?.push(String(desktop.clickId));

    // Installs naming clicks: two of a's, one of b's, and an organic one; the batch sent twice
    // (a client's retry) counts once.
    const client = new EventClient({
      baseUrl: stack.baseUrl,
      companyKey: tenant.company.company_key,
      appKey: tenant.app.app_key,
      signingSecret: tenant.app.signing_secret,
    });
    const installTs = Date.now() + 60_000;
    const named = [clicks[a]?.[0], clicks[a]?.[3], clicks[b]?.[1]];
    const installs = [...named, undefined].map((clickId, i) => ({
      event_id: `install-${i}`,
      event_name: 'install',
      install_uuid: `22222222-0000-4000-8000-00000000000${i}`,
      ts_ms: installTs,
      platform: 'ios',
      ...(clickId ? { attribution: { click_id: clickId } } : {}),
    }));
    const sent = await client.sendEvents(installs as never);
    expect(sent.results.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    await client.sendEvents(installs as never);
    await stack.pollers.drain();

    const stats = (await admin(
      'link',
      'stats',
      '--app-key',
      tenant.app.app_key,
      '--since-ms',
      String(startedMs - 86_400_000),
      '--until-ms',
      String(Date.now() + 86_400_000),
    )) as unknown as Stats;
    const attributed = (linkId: string) => named.filter((clickId) => clicks[linkId]?.includes(String(clickId))).length;
    expect(stats).toEqual({
      app_id: tenant.app.app_id,
      links: [
        { link_id: a, clicks: clicks[a]?.length, installs: attributed(a) },
        { link_id: b, clicks: clicks[b]?.length, installs: attributed(b) },
      ],
    });
    expect(stats.links.map((link) => [link.clicks, link.installs])).toEqual([
      [4, 2],
      [3, 1],
    ]);

    // A window before any of it: every link, with 0s.
    expect(
      await admin(
        'link',
        'stats',
        '--app-key',
        tenant.app.app_key,
        '--since-ms',
        String(startedMs - 10 * 86_400_000),
        '--until-ms',
        String(startedMs - 9 * 86_400_000),
      ),
    ).toEqual({
      app_id: tenant.app.app_id,
      links: [
        { link_id: a, clicks: 0, installs: 0 },
        { link_id: b, clicks: 0, installs: 0 },
      ],
    });
  }, 120_000);

  it('refuses what the commands cannot do, naming the flag', async () => {
    const link = (await admin('link', 'create', '--app-key', tenant.app.app_key, '--partner', 'acme_ads')).link_id as string;
    const refusal = (argv: string[]) =>
      runAdmin(argv).then(
        () => undefined,
        (error: Error) => error.message,
      );
    expect(await refusal(['link', 'update', '--link-id', link, '--partner', 'other'])).toBe('link update takes no --partner flag');
    expect(await refusal(['link', 'update', '--link-id', link, '--honeypot'])).toBe('link update takes no --honeypot flag');
    expect(await refusal(['link', 'update', '--link-id', link, '--ios-url', 'ftp://x'])).toBe(
      '--ios-url must be an http or https URL, or empty to clear it',
    );
    expect(await refusal(['link', 'update', '--link-id', link, '--lookback-days', '31'])).toBe('--lookback-days must be at most 30');
    expect(await refusal(['link', 'update', '--link-id', link, '--ios-url', '', '--android-url', '', '--web-url', ''])).toBe(
      'the link would have no destination: keep or give --ios-url, --android-url or --web-url',
    );
    expect(await refusal(['link', 'disable', '--link-id', 'nosuchlink00'])).toBe('link not found');
    expect(await refusal(['link', 'update', '--link-id', 'nosuchlink00', '--campaign', 'x'])).toBe('link not found');
    expect(await refusal(['link', 'stats', '--app-key', tenant.app.app_key, '--since-ms', '10', '--until-ms', '5'])).toBe(
      '--until-ms must be later than --since-ms (since_ms_must_be_less_than_until_ms)',
    );
    expect(
      await refusal(['link', 'stats', '--app-key', tenant.app.app_key, '--since-ms', '0', '--until-ms', String(366 * 86_400_000)]),
    ).toBe('--until-ms must be at most 365 days after --since-ms (window_too_large)');
  }, 60_000);
});
