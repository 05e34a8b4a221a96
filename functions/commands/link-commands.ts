import { z } from 'zod';
import { AggregateStore } from '../adapters/aggregate-store';
import { LinkStore } from '../adapters/link-store';
import { NotFoundError } from '../adapters/tenant-store';
import { SUB_PARAMS } from '../domain/links/click';
import { newClickId } from '../domain/links/click-log-key';
import { DEEP_LINK_FIELDS, type DeepLinkField, deepLinkFlag, isDeepLinkText } from '../domain/links/deep-link';
import { type ClickParam, partnerUrl, trackingLinkUrl } from '../domain/links/partner-url';
import type { Platform } from '../domain/links/platform';
import { slidingWindow } from '../domain/links/sliding-window';
import { followLink, type LinkConfig, type LinkOutcome } from '../domain/links/tracking-link';
import { isTimeBound, MAX_WINDOW_MS, windowDays } from '../domain/reports/report-query';
import { appTimeZone } from '../domain/tenants/tenant';
import { resourceName } from '../shared/config';
import { appByKey } from './apps';
import { defineCommand, type Target, UsageError } from './command';
import { countries, httpsUrl, intFlag, key, partner, url } from './flags';

const links = () => new LinkStore(resourceName.table('links'));

/** A link as `link list` (and `link update`) print it: `disabled` on every link, false for links made before it. */
const listedLink = (target: Target, link: LinkConfig) => ({
  ...link,
  disabled: link.disabled === true,
  url: trackingLinkUrl(target.baseUrl, link.link_id),
});

/**
 * `link update`'s flags: an empty value clears the setting (`--campaign ''`: no campaign), a flag
 * left out leaves it as it is. A refinement's message is said as it is, so each names its flag.
 */
const clearableUrl = (flag: string, schema: z.ZodURL = url) =>
  z
    .string()
    .trim()
    .refine(
      (value) => value === '' || schema.safeParse(value).success,
      `--${flag} must be an ${schema === url ? 'http or https' : 'https'} URL, or empty to clear it`,
    );
const clearableCountries = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((c) => c.trim().toUpperCase())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^[A-Z]{2}$/, 'must be two-letter country codes (ISO 3166-1 alpha-2), separated by commas')));
/** An empty value (or an empty list) clears; absent leaves unchanged. */
const cleared = <T>(value: T | undefined): T | null | undefined =>
  value === undefined ? undefined : value === '' || (Array.isArray(value) && value.length === 0) ? null : value;

/**
 * `--deep-link-value` and `--deep-link-sub1`..`--deep-link-sub10` (docs/deep-links.md): 1 to 100
 * characters without control characters; on `link update` an empty value clears the field.
 */
const deepLinkFlags = (clearable: boolean) =>
  Object.fromEntries(
    DEEP_LINK_FIELDS.map((field) => [
      deepLinkFlag(field),
      z
        .string()
        .refine(
          (value) => (clearable && value === '') || isDeepLinkText(value),
          `--${deepLinkFlag(field)} must be 1 to 100 characters without control characters${clearable ? ', or empty to clear it' : ''}`,
        )
        .optional(),
    ]),
  ) as Record<`deep-link-${DeepLinkField}`, z.ZodOptional<z.ZodString>>;

/** The deep link fields the flags give (empty values as null, to clear, when clearable), or undefined for none. */
function deepLinkOf(
  flags: Partial<Record<`deep-link-${DeepLinkField}`, string>>,
): Partial<Record<DeepLinkField, string | null>> | undefined {
  const given = DEEP_LINK_FIELDS.flatMap((field) => {
    const value = flags[`deep-link-${field}`];
    return value === undefined ? [] : [[field, value === '' ? null : value] as const];
  });
  return given.length > 0 ? Object.fromEntries(given) : undefined;
}

const DEEP_LINK_USAGE = '[--deep-link-value V] [--deep-link-sub1 V .. --deep-link-sub10 V]';

/** A typical visitor of each platform, as the redirect tells them apart (functions/domain/links/platform.ts). */
export const TEST_USER_AGENTS: Record<Platform, string> = {
  ios: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  desktop: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
};
/** TEST-NET-3 (RFC 5737): a documentation address, never a real visitor's. */
const TEST_ADDRESS = '203.0.113.7';

/** What GET /l/{id} would answer, in HTTP terms (as functions/link-redirect.ts maps the outcome). */
function asResponse(outcome: LinkOutcome): { status: number; location?: string; dropped?: string } {
  switch (outcome.kind) {
    case 'redirect':
      return { status: 302, location: outcome.location, ...(outcome.dropped ? { dropped: outcome.dropped } : {}) };
    case 'unknown_link':
      return { status: 404 };
    case 'rate_limited':
      return { status: 429 };
    case 'link_unavailable':
      return { status: 503 };
  }
}

/**
 * `link stats`' window, checked as the Reporting API checks since_ms and until_ms (report-query.ts,
 * in its order), each refusal said with the report's error code and naming its flag.
 */
export function statsWindow(since: string, until: string): { sinceMs: number; untilMs: number } {
  for (const [flag, value] of [
    ['since-ms', since],
    ['until-ms', until],
  ] as const) {
    if (!isTimeBound(value.trim())) {
      throw new UsageError(`--${flag} must be a whole number of epoch milliseconds (invalid_since_until)`, 'link stats', flag);
    }
  }
  const sinceMs = Number(since.trim());
  const untilMs = Number(until.trim());
  if (sinceMs >= untilMs) {
    throw new UsageError('--until-ms must be later than --since-ms (since_ms_must_be_less_than_until_ms)', 'link stats', 'until-ms');
  }
  if (untilMs - sinceMs > MAX_WINDOW_MS) {
    throw new UsageError('--until-ms must be at most 365 days after --since-ms (window_too_large)', 'link stats', 'until-ms');
  }
  return { sinceMs, untilMs };
}

const subFlags = Object.fromEntries(SUB_PARAMS.map((sub) => [sub, z.string().max(256).optional()])) as Record<
  (typeof SUB_PARAMS)[number],
  z.ZodOptional<z.ZodString>
>;

export const linkCommands = [
  defineCommand({
    name: 'link create',
    usage:
      'link create --app-key K --partner P [--campaign C] [--honeypot] [--ios-url U] [--android-url U] [--web-url U]\n' +
      `            [--countries-allow US,CA] [--countries-block XX] [--lookback-days N] ${DEEP_LINK_USAGE}\n` +
      '            (--web-url, https only: where desktops and other platforms without a store go)',
    flags: z.object({
      'app-key': key,
      partner,
      campaign: z.string().trim().min(1).max(200).optional(),
      honeypot: z.boolean().optional(),
      'ios-url': url.optional(),
      'android-url': url.optional(),
      'web-url': httpsUrl.optional(),
      'countries-allow': countries.optional(),
      'countries-block': countries.optional(),
      'lookback-days': intFlag.max(30).optional(),
      ...deepLinkFlags(false),
    }),
    booleanFlags: ['honeypot'],
    async execute(f, target) {
      const link = await links().create(await appByKey(f['app-key']), {
        partner: f.partner,
        campaign: f.campaign,
        honeypot: f.honeypot,
        ios_url: f['ios-url'],
        android_url: f['android-url'],
        web_url: f['web-url'],
        countries_allow: f['countries-allow'],
        countries_block: f['countries-block'],
        lookback_days: f['lookback-days'],
        deep_link: deepLinkOf(f) as Record<DeepLinkField, string> | undefined,
      });
      return { link_id: link.link_id, url: trackingLinkUrl(target.baseUrl, link.link_id) };
    },
  }),
  defineCommand({
    name: 'link update',
    usage:
      'link update --link-id L [--campaign C] [--ios-url U] [--android-url U] [--web-url U]\n' +
      `            [--countries-allow US,CA] [--countries-block XX] [--lookback-days N] ${DEEP_LINK_USAGE}\n` +
      "            (an empty value clears a setting: --campaign ''; partner and honeypot cannot change;\n" +
      '             the redirect follows the change within 30 s)',
    flags: z.object({
      'link-id': key,
      campaign: z.string().trim().max(200).optional(),
      'ios-url': clearableUrl('ios-url').optional(),
      'android-url': clearableUrl('android-url').optional(),
      'web-url': clearableUrl('web-url', httpsUrl).optional(),
      'countries-allow': clearableCountries.optional(),
      'countries-block': clearableCountries.optional(),
      'lookback-days': intFlag.max(30).optional(),
      ...deepLinkFlags(true),
    }),
    async execute(f, target) {
      const changes = {
        campaign: cleared(f.campaign),
        ios_url: cleared(f['ios-url']),
        android_url: cleared(f['android-url']),
        web_url: cleared(f['web-url']),
        countries_allow: cleared(f['countries-allow']),
        countries_block: cleared(f['countries-block']),
        lookback_days: f['lookback-days'],
        deep_link: deepLinkOf(f),
      };
      if (Object.values(changes).every((value) => value === undefined)) {
        throw new UsageError(
          'link update: give at least one of --campaign, --ios-url, --android-url, --web-url, --countries-allow, --countries-block, --lookback-days, --deep-link-value, --deep-link-sub1..10',
          'link update',
        );
      }
      return listedLink(target, await links().update(f['link-id'], changes));
    },
  }),
  ...(['disable', 'enable'] as const).map((verb) =>
    defineCommand({
      name: `link ${verb}`,
      usage:
        verb === 'disable'
          ? 'link disable --link-id L                 (GET /l/L answers 404 as for an unknown link, records no click; link enable undoes it)'
          : 'link enable --link-id L                  (a disabled link redirects and records clicks again)',
      flags: z.object({ 'link-id': key }),
      async execute(f) {
        const disabled = verb === 'disable';
        await links().setDisabled(f['link-id'], disabled);
        return { link_id: f['link-id'], disabled };
      },
    }),
  ),
  defineCommand({
    name: 'link stats',
    usage:
      'link stats --app-key K --since-ms MS --until-ms MS\n' +
      "            (clicks and attributed installs of each of the app's links, over the app's local days\n" +
      '             the window overlaps, as the reports count days; at most 365 days)',
    flags: z.object({ 'app-key': key, 'since-ms': z.string(), 'until-ms': z.string() }),
    async execute(f) {
      const window = statsWindow(f['since-ms'], f['until-ms']);
      const app = await appByKey(f['app-key']);
      const [all, counts] = await Promise.all([
        links().linksOfApp(app.app_id),
        new AggregateStore(resourceName.table('aggregates')).linkCounts(app.app_id, windowDays(window, appTimeZone(app))),
      ]);
      return {
        app_id: app.app_id,
        links: all.map((link) => ({
          link_id: link.link_id,
          clicks: counts.get(link.link_id)?.clicks ?? 0,
          installs: counts.get(link.link_id)?.installs ?? 0,
        })),
      };
    },
  }),
  defineCommand({
    name: 'link list',
    usage: "link list --app-key K                    (the app's links and their settings)",
    flags: z.object({ 'app-key': key }),
    async execute(f, target) {
      const app = await appByKey(f['app-key']);
      return { app_id: app.app_id, links: (await links().linksOfApp(app.app_id)).map((link) => listedLink(target, link)) };
    },
  }),
  defineCommand({
    name: 'link try',
    usage:
      'link try --link-id L [--click-id X] [--sub1 V .. --sub5 V] [--mobile-only] [--country XX]\n' +
      '            (the URL to give the partner, and where a test click from each platform is sent;\n' +
      "             the redirect's own rules run on the stored link, and nothing is recorded or blocked)",
    flags: z.object({
      'link-id': key,
      'click-id': z.string().max(256).optional(),
      ...subFlags,
      'mobile-only': z.boolean().optional(),
      country: z
        .string()
        .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code (ISO 3166-1 alpha-2)')
        .transform((c) => c.toUpperCase())
        .optional(),
    }),
    booleanFlags: ['mobile-only'],
    async execute(f, target) {
      const link = await links().byId(f['link-id']);
      if (!link) throw new NotFoundError('link');
      const query: Partial<Record<ClickParam, string>> = {};
      if (f['click-id'] !== undefined) query.click_id = f['click-id'];
      for (const sub of SUB_PARAMS) if (f[sub] !== undefined) query[sub] = f[sub];
      if (f['mobile-only']) query.mobile_only = '1';
      // The redirect's own pipeline on the stored link, with ports that keep nothing: the address
      // is never blocked (a honeypot's test click blocks no one), the rate limit always admits,
      // and the click is made but not written.
      const ports = {
        links: { byId: async () => link },
        ipBlocks: { isBlocked: async () => false, block: async () => undefined },
        rateCounter: { increment: async (_key: string, slot: number) => new Map([[slot, 1]]), tidy: async () => undefined },
        rateWindow: slidingWindow(1, 60_000),
        clicks: { record: async () => undefined },
        newClickId,
      };
      const clicks = [];
      for (const platform of Object.keys(TEST_USER_AGENTS) as Platform[]) {
        const outcome = await followLink(ports, {
          linkId: link.link_id,
          userAgent: TEST_USER_AGENTS[platform],
          viewer: { ip: TEST_ADDRESS, country: f.country },
          query,
          nowMs: Date.now(),
        });
        clicks.push({ platform, ...asResponse(outcome) });
      }
      // The partner's macros ({click_id}) stay literal in the URL, or the partner never fills them in.
      return { link_id: link.link_id, url: partnerUrl(target.baseUrl, link.link_id, query), clicks };
    },
  }),
];
