import { LinkDomainStore } from '../functions/adapters/link-domain-store';
import { LinkStore } from '../functions/adapters/link-store';
import { NotFoundError, TenantStore } from '../functions/adapters/tenant-store';
import { TEST_USER_AGENTS } from '../functions/commands/link-commands';
import { answerFirstLaunch, type FirstLaunchAnswer, type FirstLaunchRecord } from '../functions/domain/attribution/first-launch';
import { type AppLinkSettings, WELL_KNOWN_FILES, type WellKnownPath, wellKnownFile } from '../functions/domain/links/app-links';
import type { ClickRecord } from '../functions/domain/links/click';
import { newClickId } from '../functions/domain/links/click-log-key';
import { slidingWindow } from '../functions/domain/links/sliding-window';
import { followLink } from '../functions/domain/links/tracking-link';
import { LINK_SETTINGS } from '../functions/domain/tenants/tenant';
import { resourceName } from '../functions/shared/config';

/**
 * The console's two deep-link views that are not admin commands (docs/console.md, "Deep links"):
 * the well-known files of an app's link domains as the well-known route serves them, and a dry
 * run of a click followed by the first launch of an app it installed. Both read only; neither
 * writes a click, an answer or a block.
 */

/** A link domain's two files: the bytes GET /.well-known/... answers for that Host, or null where it answers 404. */
export interface DomainFiles {
  readonly domain: string;
  readonly files: Record<WellKnownPath, string | null>;
}

export interface AppLinkView {
  readonly app_key: string;
  readonly settings: AppLinkSettings;
  readonly domains: DomainFiles[];
}

const tenants = () => new TenantStore(resourceName.table('tenants'));

/**
 * The app's link identity and, for each of its link domains, both files, built by wellKnownFile
 * (the route's own function) on the domain's item read uncached: what the route serves once its
 * cache (30 s) has caught up.
 */
export async function appLinkView(appKey: string): Promise<AppLinkView> {
  const app = await tenants().appByKey(appKey);
  if (!app) throw new NotFoundError('app');
  const store = new LinkDomainStore(resourceName.table('tenants'));
  const domains = await Promise.all(
    (app.link_domains ?? []).map(async (domain) => {
      const entries = await Promise.all(
        (Object.keys(WELL_KNOWN_FILES) as WellKnownPath[]).map(async (path) => [path, (await wellKnownFile(store, domain, path)) ?? null]),
      );
      return { domain, files: Object.fromEntries(entries) as DomainFiles['files'] };
    }),
  );
  return {
    app_key: app.app_key,
    settings: Object.fromEntries(LINK_SETTINGS.flatMap((name) => (app[name] === undefined ? [] : [[name, app[name]]]))),
    domains,
  };
}

export type TryPlatform = 'ios' | 'android';

export interface FirstLaunchTrial {
  readonly link_id: string;
  readonly platform: TryPlatform;
  /** The app's switch: iOS is matched only probabilistically, and only when it is on. */
  readonly probabilistic: boolean;
  /** Where the test click was sent, and the Play referrer the app would read from it (Android). */
  readonly location: string | null;
  readonly install_referrer: string | null;
  /** Why no click was made (the link's drop or 404), when none was. */
  readonly no_click: string | null;
  readonly answer: FirstLaunchAnswer;
}

/** A documentation address (RFC 5737), as `link try` uses: the click and the first launch come from it. */
const TRY_ADDRESS = '203.0.113.7';
/** The first launch comes this long after the click, as an install would. */
const CLICK_TO_LAUNCH_MS = 60_000;

/**
 * What an app installed from a click on the link would get at first launch: the redirect's own
 * pipeline (followLink) makes the click the link would record for the platform's typical user
 * agent, and answerFirstLaunch (matchClick's rules and windows) runs on it with ports that hold
 * that one click and keep nothing. Android sends the referrer the store URL carries (deterministic);
 * iOS sends none, so it is found only when the app has probabilistic matching on.
 */
export async function tryFirstLaunch(linkId: string, platform: TryPlatform, nowMs = Date.now()): Promise<FirstLaunchTrial> {
  const link = await new LinkStore(resourceName.table('links')).byId(linkId);
  if (!link) throw new NotFoundError('link');
  const app = await tenants().appById(link.app_id);
  if (!app) throw new NotFoundError('app');
  let click: ClickRecord | undefined;
  const outcome = await followLink(
    {
      links: { byId: async () => link },
      ipBlocks: { isBlocked: async () => false, block: async () => undefined },
      rateCounter: { increment: async (_key: string, slot: number) => new Map([[slot, 1]]), tidy: async () => undefined },
      rateWindow: slidingWindow(1, 60_000),
      clicks: {
        record: async (made) => {
          click = made;
        },
      },
      newClickId,
    },
    { linkId, userAgent: TEST_USER_AGENTS[platform], viewer: { ip: TRY_ADDRESS }, query: {}, nowMs },
  );
  const location = outcome.kind === 'redirect' ? outcome.location : null;
  const referrer = platform === 'android' && location ? playReferrer(location) : undefined;
  const noClick = click ? null : outcome.kind === 'redirect' ? (outcome.dropped ?? 'not_recorded') : outcome.kind;
  const answer = await answerFirstLaunch(
    {
      clicks: {
        clickById: async (appId, clickId) => (click?.click_id === clickId && click.app_id === appId ? click : undefined),
        latestClick: async (query) =>
          click &&
          click.app_id === query.appId &&
          click.ip === query.ip &&
          click.platform === query.platform &&
          click.ts_ms >= query.fromMs &&
          click.ts_ms <= query.toMs
            ? click
            : undefined,
      },
      answers: {
        first: async () => undefined,
        keep: async (record: FirstLaunchRecord) => record,
        counted: async () => undefined,
      },
    },
    {
      appId: app.app_id,
      probabilistic: app.probabilistic,
      clientIp: TRY_ADDRESS,
      receivedMs: nowMs + CLICK_TO_LAUNCH_MS,
      request: {
        installUuid: '00000000-0000-4000-8000-000000000000',
        platform,
        appVersion: 'console',
        sdkVersion: 'console',
        ...(referrer ? { installReferrer: referrer } : {}),
      },
    },
  );
  return {
    link_id: link.link_id,
    platform,
    probabilistic: app.probabilistic,
    location,
    install_referrer: referrer ?? null,
    no_click: noClick,
    answer,
  };
}

/** The `referrer` a Google Play URL carries, which the Install Referrer API hands the app; undefined elsewhere. */
function playReferrer(location: string): string | undefined {
  try {
    return new URL(location).searchParams.get('referrer') ?? undefined;
  } catch {
    return undefined;
  }
}
