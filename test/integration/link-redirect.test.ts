// GET /l/{link_id} over real HTTP against the local runtime and its emulators, with real user
// agents. TRUST_PROXY lets each test click from its own addresses (X-Forwarded-For) and set the
// CloudFront viewer country and ASN, as CloudFront would.

import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { runAdmin } from '../../bin/admin';
import { ClickStore } from '../../functions/adapters/click-store';
import { IpBlockStore } from '../../functions/adapters/ip-block-store';
import { LinkStore } from '../../functions/adapters/link-store';
import { CLICK_KEPT_AFTER_CLAIM_S, type ClickRecord, claimDeadline } from '../../functions/domain/links/click';
import { clickLogKey } from '../../functions/domain/links/click-log-key';
import { LinkConfigError, type NewLink } from '../../functions/domain/links/link-config';
import { clickTables } from '../../functions/shared/click-tables';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { CRAWLERS, DESKTOP, IPADOS_SAFARI, MOBILE } from '../unit/links/user-agents';

let stack: LocalStack;
let tenant: Tenant;

const PLAY = 'https://play.google.com/store/apps/details?id=com.example.test';
const APP_STORE = 'https://apps.apple.com/app/id1234567890';
const WEB = 'https://example.com/app';

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant();
});

afterAll(async () => {
  await stack?.stop();
});

const linkOf = (input: Partial<NewLink> = {}) =>
  new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'acme_ads', campaign: 'spring', ...input });

// Every test clicks from its own /24 so that no test spends another's rate-limit allowance.
let network = 0;
const freshNetwork = () => `10.${Math.floor(++network / 256)}.${network % 256}`;

interface ClickOptions {
  ip: string;
  ua?: string;
  query?: string;
  country?: string;
  asn?: number;
}

async function click(linkId: string, { ip, ua = MOBILE.iosSafari, query = '', country = 'US', asn }: ClickOptions) {
  const headers: Record<string, string> = { 'user-agent': ua, 'x-forwarded-for': ip, 'cloudfront-viewer-country': country };
  if (asn !== undefined) headers['cloudfront-viewer-asn'] = String(asn);
  const response = await fetch(`${stack.baseUrl}/l/${linkId}${query}`, { redirect: 'manual', headers });
  return { status: response.status, location: response.headers.get('location'), headers: response.headers, body: await response.text() };
}

/** The link's clicks as click_log holds them (with their pk and sk), or as the old clicks table does. */
async function clicksOfLink(linkId: string, table: 'click_log' | 'clicks' = 'click_log'): Promise<ClickRecord[]> {
  const { Items } = await dynamoClient().send(
    new ScanCommand({
      TableName: resourceName.table(table),
      FilterExpression: 'link_id = :link',
      ExpressionAttributeValues: { ':link': linkId },
    }),
  );
  return (Items ?? []) as ClickRecord[];
}

function expectBareRedirect(response: { status: number; location: string | null }, destination: string) {
  expect(response.status).toBe(302);
  expect(response.location).toBe(destination);
}

describe('GET /l/{link_id}', () => {
  it.each([
    ['iOS Safari', MOBILE.iosSafari, 'ios'],
    ['the Facebook in-app browser on iOS', MOBILE.facebookIos, 'ios'],
    ['the Instagram in-app browser on iOS', MOBILE.instagramIos, 'ios'],
    ['the TikTok in-app browser on iOS', MOBILE.tiktokIos, 'ios'],
    ['Chrome on Android', MOBILE.chromeAndroid, 'android'],
    ['the Facebook in-app browser on Android', MOBILE.facebookAndroid, 'android'],
    ['the Instagram in-app browser on Android', MOBILE.instagramAndroid, 'android'],
    ['the TikTok in-app browser on Android', MOBILE.tiktokAndroid, 'android'],
  ])('sends %s to its store with the click and leaves exactly one click record', async (_name, ua, platform) => {
    const link = await linkOf();
    const ip = `${freshNetwork()}.17`;
    const response = await click(link.link_id, {
      ip,
      ua,
      country: 'gb',
      asn: 2856,
      query: '?click_id=ext-123&sub1=s1&sub2=s%202&sub3=s3&sub4=s4&sub5=s5&url=https://evil.example',
    });

    expect(response.status).toBe(302);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const records = await clicksOfLink(link.link_id);
    expect(records).toHaveLength(1);
    const record = records[0];
    expect(record.click_id).toMatch(/^[A-Za-z0-9_-]{36}$/);

    const location = new URL(response.location!);
    if (platform === 'android') {
      expect(`${location.origin}${location.pathname}?id=${location.searchParams.get('id')}`).toBe(PLAY);
      const referrer = new URLSearchParams(location.searchParams.get('referrer')!);
      expect(Object.fromEntries(referrer)).toEqual({
        click_id: record.click_id,
        link_id: link.link_id,
        utm_source: 'acme_ads',
        utm_campaign: 'spring',
      });
    } else {
      expect(response.location).toBe(`${APP_STORE}?click_id=${record.click_id}&link_id=${link.link_id}`);
    }

    const now = Date.now();
    expect(record).toEqual({
      click_id: record.click_id,
      link_id: link.link_id,
      app_id: tenant.app.app_id,
      company_id: tenant.company.company_id,
      partner: 'acme_ads',
      campaign: 'spring',
      ext_click_id: 'ext-123',
      sub1: 's1',
      sub2: 's 2',
      sub3: 's3',
      sub4: 's4',
      sub5: 's5',
      ip,
      ip_block: `${ip.split('.').slice(0, 3).join('.')}.0/24`,
      user_agent: ua,
      platform,
      country: 'GB',
      asn: 2856,
      ts_ms: record.ts_ms,
      app_ip_platform: `${tenant.app.app_id}#${ip}#${platform}`,
      ...clickLogKey(tenant.app.app_id, record.click_id),
      lookback_days: 7,
      // Its local day in the app's zone (UTC here), by which the click-count lane counts it (ADR 0008).
      count_day: new Date(record.ts_ms).toISOString().slice(0, 10),
      expires_at: Math.floor(record.ts_ms / 1000) + 7 * 86_400 + CLICK_KEPT_AFTER_CLAIM_S,
    });
    expect(Math.abs(record.ts_ms - now)).toBeLessThan(10_000);

    // The aggregator's two look-ups, on click_log's key alone: by app and id, and the latest of
    // (app, IP, platform). Another app's look-up of the id finds nothing; the old table is not written.
    const { pk: _pk, sk: _sk, ...stored } = record as ClickRecord & { pk: string; sk: string };
    const clicks = new ClickStore(clickTables());
    expect(await clicks.byId(tenant.app.app_id, record.click_id)).toEqual(stored);
    expect(await clicks.byId('app_other', record.click_id)).toBeUndefined();
    expect(
      await clicks.latest({ appId: tenant.app.app_id, ip, platform: record.platform, fromMs: now - 86_400_000, toMs: now + 60_000 }),
    ).toEqual(stored);
    expect(await clicksOfLink(link.link_id, 'clicks')).toEqual([]);
  });

  it.each(Object.entries(CRAWLERS))('redirects the crawler %s without a click id and records nothing', async (_name, ua) => {
    const link = await linkOf();
    expectBareRedirect(await click(link.link_id, { ip: `${freshNetwork()}.1`, ua }), ua.includes('Android') ? PLAY : WEB);
    expect(await clicksOfLink(link.link_id)).toEqual([]);
  });

  it('redirects an empty user agent without a click id', async () => {
    const link = await linkOf();
    expectBareRedirect(await click(link.link_id, { ip: `${freshNetwork()}.1`, ua: '' }), WEB);
    expect(await clicksOfLink(link.link_id)).toEqual([]);
  });

  it('answers an unknown link 404 unknown_link', async () => {
    for (const id of ['doesNotExist', 'a'.repeat(200), '%00', '..%2F..%2Fevil.com']) {
      const response = await click(id, { ip: `${freshNetwork()}.1` });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body)).toEqual({ error: 'unknown_link' });
    }
  });

  it('answers any other path under /l/ 404 unknown_link, as the function URL behind /l/* gets it (issue 41)', async () => {
    const link = await linkOf();
    for (const path of [`${link.link_id}/more`, `${link.link_id}/`, '', 'a/b']) {
      const response = await fetch(`${stack.baseUrl}/l/${path}`, {
        redirect: 'manual',
        headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': `${freshNetwork()}.1` },
      });
      expect([path, response.status, await response.json()]).toEqual([path, 404, { error: 'unknown_link' }]);
    }
    expect(await clicksOfLink(link.link_id)).toEqual([]);
  });

  it('answers a HEAD as the GET without recording a click, and leaves other methods to CloudFront, which refuses them (403)', async () => {
    const link = await linkOf();
    const headers = { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': `${freshNetwork()}.1` };
    const post = await fetch(`${stack.baseUrl}/l/${link.link_id}`, { method: 'POST', redirect: 'manual', headers, body: '{}' });
    expect(post.status).toBe(403);
    // A link checker or a chat preview: the store it would lead to, with no click id, and no click.
    const head = await fetch(`${stack.baseUrl}/l/${link.link_id}`, { method: 'HEAD', redirect: 'manual', headers });
    expect([head.status, head.headers.get('location')]).toEqual([302, APP_STORE]);
    expect(await clicksOfLink(link.link_id)).toEqual([]);
    // The same visitor's GET is the click.
    const get = await fetch(`${stack.baseUrl}/l/${link.link_id}`, { method: 'GET', redirect: 'manual', headers });
    const [record] = await clicksOfLink(link.link_id);
    expect([get.status, get.headers.get('location')]).toEqual([302, `${APP_STORE}?click_id=${record?.click_id}&link_id=${link.link_id}`]);
    expect(await clicksOfLink(link.link_id)).toHaveLength(1);
  });

  it('lets no query parameter or path trick change the destination host', async () => {
    const link = await linkOf();
    const ip = `${freshNetwork()}.1`;
    const attempts = [
      '?url=https://evil.example/',
      '?redirect=https%3A%2F%2Fevil.example%2F',
      '?redirect_uri=//evil.example&next=//evil.example&return=evil.example',
      '?destination=https:%2F%2Fevil.example&web_url=https://evil.example&ios_url=https://evil.example',
      '?click_id=%0D%0ALocation:%20https://evil.example&sub1=@evil.example',
      '?link_id=other&referrer=https://evil.example',
      '?url=%68%74%74%70%73%3a%2f%2f%65%76%69%6c%2e%65%78%61%6d%70%6c%65',
    ];
    for (const ua of [MOBILE.iosSafari, MOBILE.chromeAndroid, DESKTOP.chromeWindows, CRAWLERS.curl]) {
      for (const query of attempts) {
        const response = await click(link.link_id, { ip, ua, query });
        expect(response.status).toBe(302);
        expect(['apps.apple.com', 'play.google.com', 'example.com']).toContain(new URL(response.location!).host);
        expect(response.location).not.toMatch(/evil/i);
      }
    }
    for (const path of [
      `${link.link_id}/..%2F..%2Fevil.example`,
      `${link.link_id}%2F%2Fevil.example`,
      `%2F%2Fevil.example`,
      `${link.link_id}@evil.example`,
    ]) {
      const response = await fetch(`${stack.baseUrl}/l/${path}`, {
        redirect: 'manual',
        headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip },
      });
      expect(response.status).toBe(404);
      expect(response.headers.get('location')).toBeNull();
    }
  });

  describe('a honeypot link', () => {
    it('answers 404 unknown_link, blocks the address for 7 days, and drops its clicks on other links', async () => {
      const honeypot = await linkOf({ honeypot: true });
      const regular = await linkOf();
      const ip = `${freshNetwork()}.66`;
      const neighbour = ip.replace(/\.66$/, '.67');

      const unknown = await click('noSuchLink00', { ip: `${freshNetwork()}.1` });
      const trapped = await click(honeypot.link_id, { ip });
      expect(trapped.status).toBe(404);
      expect(trapped.body).toBe(unknown.body);
      expect(trapped.headers.get('content-type')).toBe(unknown.headers.get('content-type'));
      expect(trapped.headers.get('cache-control')).toBe(unknown.headers.get('cache-control'));

      const company = tenant.company.company_id;
      const { Item } = await dynamoClient().send(
        new GetCommand({ TableName: resourceName.table('ip_blocks'), Key: { ip: `${company}#${ip}` } }),
      );
      expect(Item).toMatchObject({
        ip: `${company}#${ip}`,
        address: ip,
        link_id: honeypot.link_id,
        app_id: tenant.app.app_id,
        company_id: company,
      });
      expect(Item!.expires_at - Math.floor(Item!.blocked_ms / 1000)).toBe(7 * 86_400);
      const { address: _address, ...entry } = Item!;
      expect(await new IpBlockStore(resourceName.table('ip_blocks')).activeBlock(company, ip)).toEqual({ ...entry, ip });

      for (const ua of [MOBILE.iosSafari, MOBILE.chromeAndroid]) {
        const response = await click(regular.link_id, { ip, ua });
        expectBareRedirect(response, ua === MOBILE.iosSafari ? APP_STORE : PLAY);
      }
      expect(await clicksOfLink(regular.link_id)).toEqual([]);
      // Only the address is blocked, not its neighbours.
      expect((await click(regular.link_id, { ip: neighbour })).location).toContain('click_id=');
    });

    it('honours no block written before blocks were per company (keyed by the address alone)', async () => {
      const regular = await linkOf();
      const ip = `${freshNetwork()}.8`;
      const nowS = Math.floor(Date.now() / 1000);
      await dynamoClient().send(
        new PutCommand({
          TableName: resourceName.table('ip_blocks'),
          Item: {
            ip,
            ip_block: 'legacy',
            link_id: 'lnk_legacy01',
            app_id: tenant.app.app_id,
            company_id: tenant.company.company_id,
            blocked_ms: nowS * 1000,
            expires_at: nowS + 86_400,
          },
        }),
      );
      expect((await click(regular.link_id, { ip })).location).toContain('click_id=');
    });

    it('answers 404 to a crawler without blocking its address', async () => {
      const honeypot = await linkOf({ honeypot: true });
      const regular = await linkOf();
      const ip = `${freshNetwork()}.5`;
      for (const ua of [CRAWLERS.googlebot, CRAWLERS.facebookexternalhit]) {
        const response = await click(honeypot.link_id, { ip, ua });
        expect(response.status).toBe(404);
        expect(JSON.parse(response.body)).toEqual({ error: 'unknown_link' });
      }
      expect(await new IpBlockStore(resourceName.table('ip_blocks')).activeBlock(tenant.company.company_id, ip)).toBeUndefined();
      expect((await click(regular.link_id, { ip })).location).toContain('click_id=');
    });

    it('blocks an IPv6 address in every spelling, and an IPv4-mapped one as the IPv4 address', async () => {
      const honeypot = await linkOf({ honeypot: true });
      const regular = await linkOf();
      expect((await click(honeypot.link_id, { ip: '2001:DB8:AB:CD:0:0:0:1' })).status).toBe(404);
      expectBareRedirect(await click(regular.link_id, { ip: '2001:db8:ab:cd::1' }), APP_STORE);
      // Another address of the same /48 is not blocked.
      expect((await click(regular.link_id, { ip: '2001:db8:ab:cd::2' })).location).toContain('click_id=');

      const v4 = `${freshNetwork()}.9`;
      expect((await click(honeypot.link_id, { ip: `::ffff:${v4}` })).status).toBe(404);
      expectBareRedirect(await click(regular.link_id, { ip: v4 }), APP_STORE);
      expect(await new IpBlockStore(resourceName.table('ip_blocks')).activeBlock(tenant.company.company_id, `::ffff:${v4}`)).toMatchObject({
        ip: v4,
      });
    });
  });

  describe('mobile_only', () => {
    it.each([
      ['Chrome on Windows', DESKTOP.chromeWindows],
      ['Firefox on Windows', DESKTOP.firefoxWindows],
      ['Safari on a Mac (and iPadOS Safari, which sends the same user agent)', IPADOS_SAFARI],
    ])('sends %s to the web URL without recording it', async (_name, ua) => {
      const link = await linkOf();
      expectBareRedirect(await click(link.link_id, { ip: `${freshNetwork()}.1`, ua, query: '?mobile_only=1' }), WEB);
      expect(await clicksOfLink(link.link_id)).toEqual([]);
    });

    it('still records a phone', async () => {
      const link = await linkOf();
      const response = await click(link.link_id, { ip: `${freshNetwork()}.1`, ua: MOBILE.instagramIos, query: '?mobile_only=1' });
      expect(response.location).toMatch(/^https:\/\/apps\.apple\.com\/app\/id1234567890\?click_id=/);
      expect(await clicksOfLink(link.link_id)).toHaveLength(1);
    });

    it('without it, records a desktop click and sends it to the web URL', async () => {
      const link = await linkOf();
      const response = await click(link.link_id, { ip: `${freshNetwork()}.1`, ua: DESKTOP.firefoxWindows });
      const [record] = await clicksOfLink(link.link_id);
      expect(record).toMatchObject({ platform: 'desktop', user_agent: DESKTOP.firefoxWindows });
      expect(response.location).toBe(`${WEB}?click_id=${record.click_id}&link_id=${link.link_id}`);
    });
  });

  describe('the edge filter', () => {
    it('keeps a link to its allowed countries', async () => {
      const link = await linkOf({ countries_allow: ['US', 'CA'] });
      const net = freshNetwork();
      expect((await click(link.link_id, { ip: `${net}.1`, country: 'CA' })).location).toContain('click_id=');
      expectBareRedirect(await click(link.link_id, { ip: `${net}.2`, country: 'DE' }), APP_STORE);
      expect(await clicksOfLink(link.link_id)).toHaveLength(1);
    });

    it('drops a blocked country', async () => {
      const link = await linkOf({ countries_block: ['RU'] });
      const net = freshNetwork();
      expectBareRedirect(await click(link.link_id, { ip: `${net}.1`, country: 'RU', ua: MOBILE.chromeAndroid }), PLAY);
      expect((await click(link.link_id, { ip: `${net}.2`, country: 'FR' })).location).toContain('click_id=');
      expect(await clicksOfLink(link.link_id)).toHaveLength(1);
    });

    it('drops clicks from hosting networks', async () => {
      const link = await linkOf();
      const net = freshNetwork();
      for (const asn of [16509, 14061, 24940, 396982]) {
        expectBareRedirect(await click(link.link_id, { ip: `${net}.1`, asn }), APP_STORE);
      }
      expect((await click(link.link_id, { ip: `${net}.2`, asn: 13335 })).location).toContain('click_id=');
      expect(await clicksOfLink(link.link_id)).toHaveLength(1);
    });
  });

  it('counts every dropped click in ClickDropped by reason', async () => {
    // The runtime loads the handler into this test's module registry, so this is its metrics object
    // (imported here, after the runtime has configured Powertools, not at the top of the file).
    const { metrics } = await import('../../functions/shared/observability');
    const published: string[] = [];
    const addDimension = jest.spyOn(metrics, 'addDimension');
    const addMetric = jest.spyOn(metrics, 'addMetric').mockImplementation((name) => {
      const reason = addDimension.mock.calls.at(-1)?.[1];
      published.push(name === 'ClickDropped' ? `${name}:${reason}` : name);
      addDimension.mockClear();
      return metrics;
    });
    try {
      const link = await linkOf({ countries_block: ['KP'] });
      const net = freshNetwork();
      await click(link.link_id, { ip: `${net}.1`, ua: CRAWLERS.pythonRequests });
      await click(link.link_id, { ip: `${net}.1`, ua: '' });
      await click(link.link_id, { ip: `${net}.1`, asn: 8075 });
      await click(link.link_id, { ip: `${net}.1`, country: 'KP' });
      await click(link.link_id, { ip: `${net}.1`, ua: DESKTOP.chromeWindows, query: '?mobile_only=1' });
      await click(link.link_id, { ip: `${net}.1` });
      await click('noSuchLink00', { ip: `${net}.1` });
      expect(published).toEqual([
        'ClickDropped:bot_user_agent',
        'ClickDropped:empty_user_agent',
        'ClickDropped:blocked_asn',
        'ClickDropped:country_not_allowed',
        'ClickDropped:desktop_on_mobile_only',
        'ClickRecorded',
        'UnknownLink',
      ]);
    } finally {
      addMetric.mockRestore();
      addDimension.mockRestore();
    }
  });

  it('keys IPv6 clicks on the /48 and IPv4-mapped clicks on the IPv4 /24', async () => {
    const link = await linkOf();
    await click(link.link_id, { ip: '2001:db8:77:1::1' });
    await click(link.link_id, { ip: '2001:db8:77:ffff::2' });
    const v4 = `${freshNetwork()}.200`;
    await click(link.link_id, { ip: `::ffff:${v4}` });
    const records = await clicksOfLink(link.link_id);
    expect(records.map((r) => [r.ip, r.ip_block]).sort()).toEqual(
      [
        ['2001:db8:77:1::1', '2001:db8:77::/48'],
        ['2001:db8:77:ffff::2', '2001:db8:77::/48'],
        [v4, `${v4.split('.').slice(0, 3).join('.')}.0/24`],
      ].sort(),
    );
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: resourceName.table('rate_limits'), Key: { pk: 'block#2001:db8:77::/48' } }),
    );
    const counted = Object.entries(Item!)
      .filter(([name]) => /^s\d+$/.test(name))
      .reduce((sum, [, n]) => sum + Number(n), 0);
    expect(counted).toBe(2);
  });

  describe('admin link create', () => {
    it('makes a link that carries the app destinations and its own overrides', async () => {
      const made = await runAdmin([
        'link',
        'create',
        '--app-key',
        tenant.app.app_key,
        '--partner',
        'cli_partner',
        '--campaign',
        'c1',
        '--web-url',
        'https://landing.example.com/x?ref=cli',
        '--countries-allow',
        'us,ca',
        '--lookback-days',
        '3',
      ]);
      expect(made.url).toBe(`${stack.baseUrl}/l/${made.link_id}`);
      const link = await new LinkStore(resourceName.table('links')).byId(String(made.link_id));
      expect(link).toMatchObject({
        app_id: tenant.app.app_id,
        partner: 'cli_partner',
        ios_url: APP_STORE,
        android_url: PLAY,
        web_url: 'https://landing.example.com/x?ref=cli',
        countries_allow: ['US', 'CA'],
        lookback_days: 3,
        honeypot: false,
      });
      const response = await click(String(made.link_id), { ip: `${freshNetwork()}.1`, ua: DESKTOP.safariMac, country: 'US' });
      const [record] = await clicksOfLink(String(made.link_id));
      expect(response.location).toBe(`https://landing.example.com/x?ref=cli&click_id=${record.click_id}&link_id=${made.link_id}`);
      expect(claimDeadline(record) - Math.floor(record.ts_ms / 1000)).toBe(3 * 86_400);
      expect(record.expires_at - claimDeadline(record)).toBe(CLICK_KEPT_AFTER_CLAIM_S);
    });

    it('refuses a link that would lead nowhere, but not a honeypot', async () => {
      const bare = await createTenant({ app: { ios_url: undefined, android_url: undefined, web_url: undefined } });
      const links = new LinkStore(resourceName.table('links'));
      await expect(links.create(bare.app, { partner: 'p' })).rejects.toBeInstanceOf(LinkConfigError);
      const honeypot = await links.create(bare.app, { partner: 'p', honeypot: true });
      expect((await click(honeypot.link_id, { ip: `${freshNetwork()}.1` })).status).toBe(404);
    });
  });
});
