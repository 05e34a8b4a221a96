/**
 * Companies, apps and server keys as the tenants table stores them (docs/architecture.md section 4), and the
 * plan rules a new company or app gets. The tenant store writes these; authentication, the links
 * and the aggregator read them. An app's signing secret is not among them: it is kept apart
 * (the signing_secrets table), for the functions that verify signatures alone.
 */

import { UTC } from '../common/days';
import type { AppLinkSettings } from '../links/app-links';
import type { ProbabilisticBasis } from '../privacy/probabilistic-basis';

/** Free plan: 10,000 accepted events per calendar month (UTC) unless --monthly-cap says otherwise. */
export const FREE_PLAN_MONTHLY_CAP = 10_000;
export const DEFAULT_LOOKBACK_DAYS = 7;

export type Plan = 'free' | 'paid';

export interface Company {
  company_id: string;
  company_key: string;
  name: string;
  plan: Plan;
  /** null: no cap (paid plans unless one is set). */
  monthly_cap: number | null;
  suspended: boolean;
  created_ms: number;
}

export interface AppDestinations {
  ios_url?: string;
  android_url?: string;
  web_url?: string;
}

/**
 * AppLinkSettings: the iOS app id, Android package and certificate fingerprints, and the link
 * domains whose well-known files name the app (docs/deep-links.md); each absent until set.
 */
export interface App extends AppDestinations, AppLinkSettings {
  app_id: string;
  app_key: string;
  company_id: string;
  company_key: string;
  name: string;
  probabilistic: boolean;
  /**
   * The documented basis of probabilistic matching (docs/privacy.md, "Probabilistic matching"):
   * `consent` matches only installs whose consent allows it, `off` none; absent: legitimate_interest.
   */
  probabilistic_basis?: ProbabilisticBasis;
  lookback_days: number;
  /**
   * The IANA time zone whose calendar days the app's reports count in (docs/analytics.md, "Time
   * zones"). Apps made before it have none: UTC (appTimeZone).
   */
  time_zone?: string;
  /**
   * The app's App Store id (digits), which Apple's postbacks name it by (docs/ios.md section 2);
   * the tenants table's `app_store#<id>` item points to the app.
   */
  app_store_id?: string;
  /** Ad network ids to partner names, for the SKAN report (`admin skan network set`). */
  skan_networks?: Record<string, string>;
  /**
   * Days after a re-engagement during which the install's revenue is credited to the re-engaging
   * link's partner in the performance report (docs/deep-links.md, "Re-engagement"), 0 to 90, 0
   * turning the crediting off; absent: 30 (DEFAULT_REENGAGEMENT_WINDOW_DAYS).
   */
  reengagement_window_days?: number;
  /** Origins whose pages may call the SDK routes from a browser (docs/sdk.md, "CORS"; web-origins.ts); absent: none. */
  web_origins?: string[];
  /** AppLovin MAX's daily user-level ad revenue pull (docs/ad-revenue.md, "The daily MAX pull"); absent: never set, off. */
  max_pull?: MaxPullSettings;
  created_ms: number;
}

/**
 * What the daily MAX pull of an app needs: whether it runs, the Secrets Manager name of the
 * report key (never the key: MAX_REPORT_KEY_SECRET_PREFIX, which is all the function may read),
 * and the application and platform MAX knows the app by.
 */
export interface MaxPullSettings {
  on: boolean;
  report_key_secret: string;
  application: string;
  platform: 'android' | 'fireos' | 'ios';
}

/** What `app update` may change: the name, the store URLs, the time zone, the App Store id, the web origins, probabilistic matching and its basis, the re-engagement window and the link settings. */
export type AppChanges = Partial<
  Pick<
    App,
    | 'name'
    | 'ios_url'
    | 'android_url'
    | 'web_url'
    | 'time_zone'
    | 'app_store_id'
    | 'web_origins'
    | 'probabilistic'
    | 'probabilistic_basis'
    | 'reengagement_window_days'
    | 'max_pull'
  >
> &
  AppLinkSettings;

/** The AppChanges that concern the link domains' well-known files. */
export const LINK_SETTINGS = ['ios_app_id', 'android_package', 'android_cert_sha256', 'link_domains'] as const;

/** The app's report time zone: its own, else UTC. */
export const appTimeZone = (app: Pick<App, 'time_zone'>): string => app.time_zone ?? UTC;

/** An app with its signing secret, as `app create` and `app show` print it to the operator. */
export interface AppWithSecret extends App {
  signing_secret: string;
}

/**
 * What a server key may do: `read` the reports and the event stream, upload ad spend (`cost`,
 * POST /api/v1/cost), send ad impressions (`ad_revenue`, POST /api/v1/ad-revenue). A key stored
 * before scopes existed has no `scopes` and reads (scopesOf).
 */
export const SERVER_KEY_SCOPES = ['read', 'cost', 'ad_revenue'] as const;
export type ServerKeyScope = (typeof SERVER_KEY_SCOPES)[number];

export interface ServerKeyRecord {
  key_hash: string;
  app_id: string;
  company_id: string;
  revoked: boolean;
  created_ms: number;
  /** Absent on keys made before scopes: those are `read` keys. */
  scopes?: ServerKeyScope[];
  /** What the key is for (`server-key create --name`, 1 to 100 characters); absent: unnamed. */
  name?: string;
  /** Its last accepted request, kept to the hour (functions/domain/tenants/key-use.ts); absent: never used. */
  last_used_ms?: number;
}

/** A server key's longest name (`server-key create --name`: 1 to 100 characters once trimmed). */
export const SERVER_KEY_NAME_MAX = 100;

/** A key's scopes: its own, else `read` (every key made before scopes read the reports). */
export const scopesOf = (record: { readonly scopes?: readonly ServerKeyScope[] }): readonly ServerKeyScope[] => record.scopes ?? ['read'];

/**
 * The scopes of `--scope read,cost`: a comma list of SERVER_KEY_SCOPES, each once, in the
 * order SERVER_KEY_SCOPES gives; undefined when a name is unknown or the list is empty.
 */
export function parseScopes(text: string): ServerKeyScope[] | undefined {
  const names = text.split(',').map((name) => name.trim());
  if (names.some((name) => !(SERVER_KEY_SCOPES as readonly string[]).includes(name))) return undefined;
  return SERVER_KEY_SCOPES.filter((scope) => names.includes(scope));
}

/** The monthly cap of a new company: the one asked for, else the free plan's, else none (paid). */
export function monthlyCapFor(plan: Plan, requested?: number): number | null {
  return requested ?? (plan === 'free' ? FREE_PLAN_MONTHLY_CAP : null);
}
