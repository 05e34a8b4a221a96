import { AddressBook, ANDROID_AGENTS, BOT_AGENTS, COUNTRIES, DATA_CENTRE_ASNS, DESKTOP_AGENTS, IOS_AGENTS } from './audience';
import { type Currency, UNKNOWN_CURRENCY } from './currencies';
import { Random } from './random';

/**
 * The traffic plan: every click, install and event the simulator will send, decided up front from
 * the seed, so the same seed gives the same traffic. Nothing here touches the network; sim/run.ts
 * sends the plan and records what happened.
 *
 * Time. Events may be back-dated (the service takes corrected times up to 90 days old), but a
 * click is always recorded at the moment it is made: now. An install can only be credited to a
 * click made before it, so a back-dated install is organic. The plan therefore puts every
 * click-driven install right after its click (click-to-install times of 15 s to 20 min, so a
 * device clock at most about 35 minutes ahead of the server, inside the 1-hour allowance), and
 * spreads the organic installs, their sessions, reinstalls and purchases over the past `days`
 * days. Partner rows are thus all on today's date, while the cohorts and their decaying D1, D7
 * and D30 come from the organic history.
 */

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * `many`: the runtime takes client addresses (and country and network) from the request
 * (TRUST_PROXY=1), so every person has their own. `one`: everything comes from this machine's
 * address; the plan then leaves out what needs many addresses (data-centre networks, countries,
 * the honeypot, click floods, probabilistic matching) and keeps its clicks under the rate limit.
 */
export type Addressing = 'many' | 'one';

/** The zone of every second app, from the first: report days are its local days (docs/analytics.md). */
export const SIM_TIME_ZONE = 'America/New_York';

/** The zone of the app of an index: every second one, from the first, in SIM_TIME_ZONE. */
export const timeZoneOf = (index: number) => (index % 2 === 0 ? SIM_TIME_ZONE : 'UTC');

export interface TrafficOptions {
  seed: string;
  apps: number;
  days: number;
  /** People who install, per app (reinstalls come on top). */
  installs: number;
  nowMs: number;
  addressing: Addressing;
}

export interface LinkPlan {
  key: string;
  partner: string;
  campaign?: string;
  honeypot?: boolean;
  countriesAllow?: string[];
}

/** Where a request comes from. The address, country and network count only in `many` mode. */
export interface Viewer {
  ip: string;
  country?: string;
  asn?: number;
}

export type ClickPurpose =
  | 'install'
  | 'browse'
  | 'desktop'
  | 'mobile_only_desktop'
  | 'bot'
  | 'data_centre'
  | 'geo_excluded'
  | 'honeypot'
  | 'blocked_ip'
  | 'flood';

/** What the link should answer: a click id, a redirect without one, the honeypot's 404, or (in a flood) either a click id or 429. */
export type ClickExpectation = 'recorded' | 'dropped' | 'unknown_link' | 'recorded_or_rate_limited';

export interface ClickPlan {
  key: string;
  link: string;
  purpose: ClickPurpose;
  platform: 'ios' | 'android' | 'desktop';
  userAgent: string;
  viewer: Viewer;
  query: Record<string, string>;
  expect: ClickExpectation;
}

/** A time: absolute (server clock, epoch ms), or relative to when a click was sent or answered. */
export type Moment = { at: number } | { click: string; from: 'sent' | 'answered'; ms: number };

export interface PlannedEvent {
  event_id: string;
  event_name: string;
  install_uuid: string;
  time: Moment;
  platform?: 'ios' | 'android';
  device_id?: string;
  revenue_usd?: number;
  /** Revenue in a store currency instead of revenue_usd: converted by the service at the day's rate. */
  revenue?: { amount: number; currency: string };
  properties?: Record<string, string | number | boolean>;
  /** On installs: the click id (iOS) or Play referrer (Android) of this click. */
  attribution?: { click: string; via: 'click_id' | 'referrer'; installBegin?: Moment };
  /** A malformed event an SDK bug would send, and the reason the service must reject it with. */
  malformed?: { reason: string; event: Record<string, unknown>; requires?: 'currencies' };
  /** On `ad_revenue` events: the impression, as the mediation SDK reports it (docs/ingestion.md, "Ad revenue"). */
  ad_revenue?: AdImpression;
  /** Sent by the tenant's server through POST /api/v1/ad-revenue instead of the SDK (docs/ad-revenue.md). */
  via?: 's2s';
}

/** An ad impression's revenue as AppLovin MAX, AdMob or LevelPlay report it to the app. */
export interface AdImpression {
  source: 'applovin_max' | 'admob' | 'ironsource_levelplay';
  network: string;
  format: 'banner' | 'interstitial' | 'rewarded';
  placement: string;
  ad_unit: string;
  /** In `currency`, to 6 decimals. */
  revenue: number;
  currency: 'USD' | Currency;
  precision: 'exact' | 'estimated';
  impression_id: string;
}

export const INSTALL_KINDS = [
  'organic',
  'click_id',
  'play_referrer',
  'probabilistic',
  'fast_ctit',
  'click_injection',
  'honeypot_ip',
  'reinstall_same_uuid',
  'reinstall_same_device',
  'retargeted_reinstall',
] as const;
export type InstallKind = (typeof INSTALL_KINDS)[number];

export interface BatchPlan {
  /** Batches of a round go out once everything of the rounds before has been aggregated. */
  round: number;
  events: PlannedEvent[];
  /** The SDK sends it again: the very same bytes (a lost answer) or re-encoded with a new sent_at. */
  retry?: 'identical' | 're-encoded';
}

export interface PersonPlan {
  key: string;
  platform: 'ios' | 'android';
  viewer: Viewer;
  /** Device clock minus server clock: the service corrects it with sent_at_ms. */
  clockOffsetMs: number;
  installs: { install_uuid: string; event_id: string; kind: InstallKind }[];
  batches: BatchPlan[];
}

export interface AppPlan {
  index: number;
  name: string;
  probabilistic: boolean;
  /** The app's IANA time zone (every second app's is SIM_TIME_ZONE, the others UTC). */
  timeZone: string;
  links: LinkPlan[];
  clicks: ClickPlan[];
  people: PersonPlan[];
}

export interface TrafficPlan {
  options: TrafficOptions;
  apps: AppPlan[];
}

/** The partners, their campaigns (a link each) and what an install costs through them (USD). */
export const PARTNERS: Readonly<Record<string, { weight: number; campaigns: string[]; cpiUsd: number }>> = {
  meta: { weight: 34, campaigns: ['prospecting_q3', 'lookalike_1pct', 'retargeting_lapsed'], cpiUsd: 2.4 },
  google_ads: { weight: 28, campaigns: ['uac_installs', 'uac_value'], cpiUsd: 3.15 },
  tiktok: { weight: 20, campaigns: ['spark_ads', 'topview'], cpiUsd: 1.7 },
  applovin: { weight: 12, campaigns: ['rewarded_video', 'playable'], cpiUsd: 0.95 },
  snapchat: { weight: 6, campaigns: ['story_ads'], cpiUsd: 2.05 },
};
/** snapchat buys only these countries; its link has an allow list (in `many` mode). */
const GEO_PARTNER = 'snapchat';
const GEO_ALLOW = ['US', 'GB', 'CA'];

const PRICES = [0.99, 1.99, 2.99, 4.99, 9.99, 19.99, 49.99];
/** Store prices in yen, for purchases made in Japan's store. */
const YEN_PRICES = [160, 320, 650, 1200, 3000, 7500];
/** USD per unit of the store currency the purchase was made in: revenue arrives converted, with up to 6 decimals. */
const FX = [1, 1, 1, 1.0837, 1.2649, 0.0067, 0.1812, 0.012];
const SCREENS = ['home', 'shop', 'level_map', 'settings', 'leaderboard'];

/**
 * Ad monetisation: the share of people in ad-funded sessions, and what one impression earns by
 * format (USD, the range of a casual game's eCPMs: $0.50 to $3 for a banner, $4 to $20 for an
 * interstitial, $10 to $50 for a rewarded video, per thousand).
 */
const AD_FUNDED_SHARE = 0.25;
const AD_FORMATS = {
  banner: { weight: 6, usd: [0.0005, 0.003], placements: ['home_bottom', 'level_map_bottom'] },
  interstitial: { weight: 3, usd: [0.004, 0.02], placements: ['level_end', 'app_resume'] },
  rewarded: { weight: 1, usd: [0.01, 0.05], placements: ['extra_life', 'double_coins'] },
} as const;
const AD_SOURCES = {
  applovin_max: { weight: 5, networks: ['APPLOVIN_NETWORK', 'UNITY_NETWORK', 'MINTEGRAL_BIDDING', 'GOOGLE_AD_MANAGER_NETWORK'] },
  admob: { weight: 3, networks: ['AdMob Network', 'Meta Audience Network'] },
  ironsource_levelplay: { weight: 2, networks: ['ironSource', 'UnityAds', 'Vungle'] },
} as const;
/** Of the impressions: sent by the tenant's server instead of the SDK, and reported twice. */
const AD_S2S_SHARE = 0.2;
const AD_DUPLICATE_SHARE = 0.03;
/** Of the impressions: reported in euros (a mediation account kept in EUR), converted at the day's rate. */
const AD_EUR_SHARE = 0.15;

export function planTraffic(options: TrafficOptions): TrafficPlan {
  const random = new Random(`attribution-sim/${options.seed}`);
  const apps: AppPlan[] = [];
  for (let index = 0; index < options.apps; index++) apps.push(planApp(random.fork(`app-${index}`), options, index));
  return { options, apps };
}

/** How many of the people play each part: every part at least once when there are people enough. */
function quotas(n: number, many: boolean, probabilistic: boolean): Record<InstallKind, number> {
  const share = (s: number) => (n >= 12 ? Math.max(1, Math.round(s * n)) : Math.round(s * n));
  const q: Record<InstallKind, number> = {
    fast_ctit: share(0.02),
    click_injection: share(0.02),
    honeypot_ip: many ? share(0.01) : 0,
    probabilistic: many && probabilistic ? share(0.04) : 0,
    retargeted_reinstall: share(0.03),
    reinstall_same_uuid: share(0.05),
    reinstall_same_device: share(0.05),
    click_id: 0,
    play_referrer: 0,
    organic: 0,
  };
  const paid = Math.round(0.4 * n) - q.fast_ctit - q.click_injection - q.probabilistic;
  q.click_id = Math.max(0, Math.round(paid * 0.55));
  q.play_referrer = Math.max(0, paid - q.click_id);
  const taken = Object.values(q).reduce((a, b) => a + b, 0);
  q.organic = Math.max(0, n - taken);
  return q;
}

function planApp(random: Random, options: TrafficOptions, index: number): AppPlan {
  const many = options.addressing === 'many';
  const probabilistic = many && index % 2 === 1;
  const timeZone = timeZoneOf(index);
  const addresses = new AddressBook(random.fork('addresses'));
  // A link per campaign: the campaign is the link's (docs/analytics.md, Dimensions).
  const links: LinkPlan[] = Object.entries(PARTNERS)
    .filter(([partner]) => many || partner !== GEO_PARTNER)
    .flatMap(([partner, p]) =>
      p.campaigns.map((campaign) => ({
        key: linkKey(partner, campaign),
        partner,
        campaign,
        ...(partner === GEO_PARTNER ? { countriesAllow: GEO_ALLOW } : {}),
      })),
    );
  if (many) links.push({ key: 'honeypot', partner: 'trap', honeypot: true });
  const partnerWeights = Object.fromEntries(links.filter((l) => !l.honeypot).map((l) => [l.partner, partnerOf(l.partner).weight]));

  const clicks: ClickPlan[] = [];
  const people: PersonPlan[] = [];
  let clickCount = 0;
  const ctx: AppContext = {
    random,
    options,
    many,
    addresses,
    clicks,
    links,
    partnerWeights,
    newClick: () => `a${index}c${++clickCount}`,
    adShowcase: false,
  };

  const q = quotas(options.installs, many, probabilistic);
  let n = 0;
  for (const kind of Object.keys(q) as InstallKind[]) {
    for (let i = 0; i < q[kind]; i++) people.push(planPerson(ctx, `a${index}p${++n}`, kind, i));
  }
  // The order people arrive in is not the order of their parts.
  shuffle(random, people);

  // Clicks that bring no install: people who looked and left, desktops, bots and click farms.
  const converting = clicks.length;
  const browsing = many ? Math.round(converting * 1.2) : Math.min(Math.round(converting * 0.15) + 1, 8);
  for (let i = 0; i < browsing; i++) {
    const platform = random.chance(0.55) ? 'ios' : 'android';
    addClick(ctx, { purpose: 'browse', platform, viewer: personViewer(ctx), link: pickPartnerLink(ctx, undefined) });
  }
  const extras = Math.max(2, Math.round((converting + browsing) * 0.06));
  for (let i = 0; i < extras; i++) {
    addClick(ctx, { purpose: 'desktop', platform: 'desktop', viewer: personViewer(ctx), link: pickPartnerLink(ctx, undefined) });
    addClick(ctx, { purpose: 'bot', platform: 'desktop', viewer: personViewer(ctx), link: pickPartnerLink(ctx, undefined) });
  }
  addClick(ctx, { purpose: 'mobile_only_desktop', platform: 'desktop', viewer: personViewer(ctx), link: pickPartnerLink(ctx, undefined) });
  if (many) {
    for (let i = 0; i < extras; i++) {
      addClick(ctx, {
        purpose: 'data_centre',
        platform: random.chance(0.5) ? 'ios' : 'android',
        viewer: { ip: addresses.person(), country: 'US', asn: random.pick(DATA_CENTRE_ASNS) },
        link: pickPartnerLink(ctx, undefined),
      });
      const excluded = random.pick(['DE', 'FR', 'BR', 'IN', 'JP']);
      addClick(ctx, {
        purpose: 'geo_excluded',
        platform: 'ios',
        viewer: { ip: addresses.person(), country: excluded, asn: random.pick(countryOf(excluded).asns) },
        link: linkKey(GEO_PARTNER, random.pick(partnerOf(GEO_PARTNER).campaigns)),
      });
    }
    // A click flood from one /24: more clicks in a burst than the rate limit lets through.
    const block = addresses.v4Block();
    const floodLink = pickPartnerLink(ctx, undefined);
    for (let i = 0; i < 140; i++) {
      addClick(ctx, {
        purpose: 'flood',
        platform: 'android',
        viewer: { ip: `${block}.${2 + (i % 250)}`, country: 'US', asn: 7922 },
        link: floodLink,
      });
    }
  }
  // One purchase per app in a currency nobody has a rate for: rejected alone, bad_currency.
  const buyer = people.find((p) => p.batches[0]?.round === 0);
  const batch = buyer?.batches[0];
  const last = batch?.events.at(-1);
  if (batch && last) {
    const event = {
      event_id: random.uuid(),
      install_uuid: last.install_uuid,
      ts_ms: 0,
      event_name: 'purchase',
      revenue: 4.99,
      currency: UNKNOWN_CURRENCY,
    };
    batch.events.push({
      ...last,
      event_id: event.event_id,
      event_name: 'purchase',
      revenue_usd: undefined,
      revenue: undefined,
      ad_revenue: undefined,
      via: undefined,
      malformed: { reason: 'bad_currency', event, requires: 'currencies' },
    });
  }
  return { index, name: `Sim App ${index + 1}`, probabilistic, timeZone, links, clicks, people };
}

interface AppContext {
  random: Random;
  options: TrafficOptions;
  many: boolean;
  addresses: AddressBook;
  clicks: ClickPlan[];
  links: LinkPlan[];
  partnerWeights: Record<string, number>;
  newClick(): string;
  /** Whether the app's first ad-funded person was given both kinds of duplicate and a server-to-server impression yet. */
  adShowcase: boolean;
}

function partnerOf(name: string): { weight: number; campaigns: string[] } {
  const found = PARTNERS[name];
  if (found === undefined) throw new Error(`no partner ${name} in the simulation's PARTNERS`);
  return found;
}

function countryOf(code: string): { weight: number; asns: readonly number[] } {
  const found = COUNTRIES[code];
  if (found === undefined) throw new Error(`no country ${code} in the audience's COUNTRIES`);
  return found;
}

function personViewer(ctx: AppContext, countries?: readonly string[]): Viewer {
  const country = countries
    ? ctx.random.pick(countries)
    : ctx.random.weighted(Object.fromEntries(Object.entries(COUNTRIES).map(([c, v]) => [c, v.weight])));
  return { ip: ctx.addresses.person(), country, asn: ctx.random.pick(countryOf(country).asns) };
}

export const linkKey = (partner: string, campaign: string) => `${partner}/${campaign}`;

function pickPartnerLink(ctx: AppContext, country: string | undefined): string {
  // Someone outside snapchat's countries is never shown its ads (the geo_excluded clicks are the exception).
  const weights = { ...ctx.partnerWeights };
  if (country !== undefined && !GEO_ALLOW.includes(country)) delete weights[GEO_PARTNER];
  if (country === undefined) delete weights[GEO_PARTNER];
  const partner = ctx.random.weighted(weights);
  return linkKey(partner, ctx.random.pick(partnerOf(partner).campaigns));
}

function addClick(ctx: AppContext, c: { purpose: ClickPurpose; platform: ClickPlan['platform']; viewer: Viewer; link: string }): string {
  const { random } = ctx;
  const key = ctx.newClick();
  const userAgent =
    c.purpose === 'bot'
      ? random.pick(BOT_AGENTS)
      : c.platform === 'ios'
        ? random.pick(IOS_AGENTS)
        : c.platform === 'android'
          ? random.pick(ANDROID_AGENTS)
          : random.pick(DESKTOP_AGENTS);
  // What ad networks append: their own click id and creative / placement macros.
  const query: Record<string, string> = {
    click_id: `${c.link.slice(0, 2)}-${random.hex(12)}`,
    sub1: `creative_${random.int(1, 6)}`,
    sub2: random.pick(['feed', 'stories', 'reels', 'search', 'rewarded']),
  };
  if (c.purpose === 'mobile_only_desktop') query.mobile_only = '1';
  const expect: ClickExpectation =
    c.purpose === 'honeypot'
      ? 'unknown_link'
      : c.purpose === 'flood'
        ? 'recorded_or_rate_limited'
        : ['bot', 'data_centre', 'geo_excluded', 'blocked_ip', 'mobile_only_desktop'].includes(c.purpose)
          ? 'dropped'
          : 'recorded';
  ctx.clicks.push({ key, link: c.link, purpose: c.purpose, platform: c.platform, userAgent, viewer: c.viewer, query, expect });
  return key;
}

interface Life {
  installUuid: string;
  eventId: string;
  /** Install time as a moment, and the same as a function of an offset from it. */
  at(offsetMs: number): Moment;
  /** Offsets from the install beyond which nothing happens (the present, or the next life). */
  endOffsetMs: number;
}

type Archetype = { loyal: boolean; churnDay: number; activeShare: number; purchaseChance: number };

function archetype(random: Random, loyal = random.chance(0.08)): Archetype {
  // A heavy-tailed lifetime, P(still around after day k) = (2 + k)^-0.7, active on 70% of those
  // days: about 32% D1, 15% D7 and 6% D30 before the loyal few, the shape of a casual game.
  const churnDay = loyal ? Infinity : Math.floor(random.next() ** (-1 / 0.7)) - 1;
  const payer = random.weighted({ none: 85, payer: 12, whale: 3 });
  return { loyal, churnDay, activeShare: loyal ? 0.8 : 0.7, purchaseChance: { none: 0.01, payer: 0.2, whale: 0.6 }[payer] };
}

function planPerson(ctx: AppContext, key: string, kind: InstallKind, nth: number): PersonPlan {
  const { random, options, many } = ctx;
  const nowMs = options.nowMs;
  const start = nowMs - options.days * DAY;
  const platform: 'ios' | 'android' =
    kind === 'play_referrer' || kind === 'click_injection' || kind === 'reinstall_same_device' || kind === 'retargeted_reinstall'
      ? 'android'
      : kind === 'click_id' || kind === 'probabilistic' || kind === 'reinstall_same_uuid'
        ? 'ios'
        : random.chance(0.55)
          ? 'ios'
          : 'android';
  const viewer = personViewer(ctx);
  // A few devices have a clock far off (a wrong time zone, a clock set by hand).
  const clockOffsetMs = random.chance(0.06) ? random.pick([-26 * HOUR, -2 * HOUR, 17 * MINUTE, 3 * DAY]) : random.int(-1500, 1500);
  const deviceId = platform === 'android' ? random.hex(16) : random.uuid().toUpperCase();
  const person: PersonPlan = { key, platform, viewer, clockOffsetMs, installs: [], batches: [] };
  const traits = archetype(random, kind === 'organic' && nth < 2 ? true : undefined);
  // Ads from a generator of the person's own, so the rest of the plan is what it was without them.
  // The app's first loyal early adopter always sees ads, and shows every way an impression arrives.
  const adRandom = new Random(`attribution-sim/${options.seed}/ads/${key}`);
  const showcase = kind === 'organic' && nth === 0 && !ctx.adShowcase;
  if (showcase) ctx.adShowcase = true;
  const ads: AdPlan | undefined = adRandom.chance(AD_FUNDED_SHARE) || showcase ? { random: adRandom, showcase } : undefined;
  // People an ad brought are bought for their spend: more of them pay in their first session, so ROAS is seen.
  if (kind !== 'organic' && kind !== 'honeypot_ip') traits.purchaseChance = Math.max(traits.purchaseChance, 0.3);

  const backdated = (installAt: number, endAt: number): Life => ({
    installUuid: random.uuid(),
    eventId: random.uuid(),
    at: (offsetMs) => ({ at: installAt + offsetMs }),
    endOffsetMs: endAt - installAt,
  });
  const clicked = (click: string, fast: boolean): Life => {
    // Counted from the click's answer: the server recorded it before answering.
    const ctitMs = fast ? random.int(2_000, 5_000) : Math.round(random.logBetween(15_000, 20 * MINUTE));
    return {
      installUuid: random.uuid(),
      eventId: random.uuid(),
      at: (offsetMs) => ({ click, from: 'answered', ms: ctitMs + offsetMs }),
      endOffsetMs: 15 * MINUTE,
    };
  };
  const personClick = (purpose: ClickPurpose, link?: string) =>
    addClick(ctx, { purpose, platform, viewer: person.viewer, link: link ?? pickPartnerLink(ctx, many ? person.viewer.country : 'US') });

  switch (kind) {
    case 'organic': {
      // Loyal early adopters first (so some installs are old enough for D30), then anyone.
      const firstAt = nth < 2 && options.days > 32 ? between(random, start, nowMs - 32 * DAY) : installTime(random, start, nowMs);
      addLife(ctx, person, backdated(firstAt, nowMs - 2 * MINUTE), kind, traits, 0, deviceId, undefined, ads);
      break;
    }
    case 'reinstall_same_uuid':
    case 'reinstall_same_device': {
      // A day or more apart when the period allows it; all within the period whatever its length.
      const firstAt = installTime(random, start, Math.max(start + HOUR, nowMs - 3 * DAY));
      const againAt = between(random, Math.min(firstAt + DAY + HOUR, nowMs - 3 * HOUR), nowMs - 2 * HOUR);
      const first = backdated(firstAt, againAt - 5 * MINUTE);
      addLife(ctx, person, first, 'organic', traits, 0, deviceId, undefined, ads);
      const second = backdated(againAt, nowMs - 2 * MINUTE);
      // iOS keeps the install id in the Keychain across a reinstall; Android keeps the device id.
      if (kind === 'reinstall_same_uuid') second.installUuid = first.installUuid;
      addLife(ctx, person, second, kind, archetype(random), 1, deviceId, undefined, ads);
      break;
    }
    case 'retargeted_reinstall': {
      // Used the app, left it, came back today through a retargeting ad.
      const firstAt = installTime(random, start, Math.max(start + HOUR, nowMs - 2 * DAY));
      addLife(ctx, person, backdated(firstAt, nowMs - 6 * HOUR), 'organic', traits, 0, deviceId, undefined, ads);
      const click = personClick('install');
      addLife(ctx, person, clicked(click, false), kind, traits, 1, deviceId, { click, via: 'referrer' }, ads);
      break;
    }
    case 'honeypot_ip': {
      // A fraudster's device: it follows the trap link no person is shown, then a real one
      // (dropped: its address is now blocked), then installs: organic, flagged.
      const trap = personClick('honeypot', 'honeypot');
      personClick('blocked_ip');
      addLife(ctx, person, clicked(trap, false), kind, traits, 0, deviceId, undefined, ads);
      break;
    }
    case 'probabilistic': {
      // The click id is lost on the way (no deep link, no referrer): the app matches by address.
      const click = personClick('install');
      addLife(ctx, person, clicked(click, false), kind, traits, 0, deviceId, undefined, ads);
      break;
    }
    default: {
      // Some people saw another partner's ad first: the last click wins.
      if (random.chance(0.12)) personClick('install');
      const click = personClick('install');
      const life = clicked(click, kind === 'fast_ctit');
      const via = platform === 'ios' ? 'click_id' : 'referrer';
      addLife(ctx, person, life, kind, traits, 0, deviceId, { click, via }, ads);
    }
  }
  return person;
}

function addLife(
  ctx: AppContext,
  person: PersonPlan,
  life: Life,
  kind: InstallKind,
  traits: Archetype,
  round: number,
  deviceId: string,
  attribution?: { click: string; via: 'click_id' | 'referrer' },
  ads?: AdPlan,
): void {
  const { random } = ctx;
  const install: PlannedEvent = {
    event_id: life.eventId,
    event_name: 'install',
    install_uuid: life.installUuid,
    time: life.at(0),
    platform: person.platform,
    device_id: deviceId,
    properties: { app_version: random.pick(['3.4.1', '3.5.0', '3.5.2']), os_version: person.platform === 'ios' ? '18.1' : '14' },
  };
  if (attribution) {
    // The Play Install Referrer API also says when the download began: normally after the click;
    // with click injection, a click fired by another app after the download had started.
    const injection = kind === 'click_injection';
    const begin = injection ? { click: attribution.click, from: 'sent' as const, ms: -random.int(20_000, 90_000) } : halfway(life.at(0));
    install.attribution = { ...attribution, ...(attribution.via === 'referrer' ? { installBegin: begin } : {}) };
  }
  person.installs.push({ install_uuid: life.installUuid, event_id: life.eventId, kind });

  const sessions = sessionEvents(random, life, traits, ads);
  // The first upload: the install and the first session. A reinstall goes alone in its round, and
  // what follows it in the next, so the service has counted it before its events arrive.
  const firstSession = sessions.filter((e) => offsetOf(e) < 20 * MINUTE);
  const later = sessions.slice(firstSession.length);
  const batches: PlannedEvent[][] = [];
  if (round === 0) batches.push([install, ...firstSession]);
  else batches.push([install], firstSession);
  // Batches of 15 to 45 of the app's own events; the impressions ride along with their session's,
  // so adding them left every other draw of the plan as it was.
  let current: PlannedEvent[] | undefined;
  let room = 0;
  for (const event of later) {
    if (!event.ad_revenue && room === 0) {
      room = random.int(15, 45);
      current = undefined;
    }
    if (!event.ad_revenue) room--;
    if (!current) {
      current = [];
      batches.push(current);
    }
    current.push(event);
  }
  const planned: BatchPlan[] = batches
    .filter((b) => b.length > 0)
    .map((events, i) => ({ round: round === 0 ? 0 : i === 0 ? 1 : 2, events }));
  // An SDK that was killed before its install upload finished sends the first session's events first.
  const [installBatch, ...rest] = planned;
  if (round === 0 && kind === 'organic' && installBatch !== undefined && rest.length > 0 && random.chance(0.04)) {
    const session = installBatch.events.slice(1);
    installBatch.events = [install];
    if (session.length) planned.splice(0, 1, { round: 0, events: session }, installBatch, ...rest);
  }
  for (const batch of planned) {
    const r = random.next();
    if (r < 0.05) batch.retry = 'identical';
    else if (r < 0.08) batch.retry = 're-encoded';
    // An SDK bug now and then: a malformed event rides along and is rejected alone.
    // Every batch holds an event (the empty ones were left out above), so there is a last to copy.
    const last = batch.events.at(-1);
    if (random.chance(0.015) && last !== undefined) batch.events.push(malformed(random, last));
  }
  person.batches.push(...planned);
}

const offsetOf = (e: PlannedEvent & { offsetMs?: number }) => e.offsetMs ?? 0;

/** A person who sees ads: their generator, and whether they show every way an impression arrives. */
interface AdPlan {
  random: Random;
  showcase: boolean;
}

/** How an impression reaches the service: the SDK, the tenant's server, or twice (a callback fired twice, or both). */
type AdDelivery = 'sdk' | 's2s' | 'sdk_twice' | 'sdk_and_s2s';

const AD_VIAS: Readonly<Record<AdDelivery, readonly ('sdk' | 's2s')[]>> = {
  sdk: ['sdk'],
  s2s: ['s2s'],
  sdk_twice: ['sdk', 'sdk'],
  sdk_and_s2s: ['sdk', 's2s'],
};

/** Sessions and named events over the install's life, with the decay of a real app. */
function sessionEvents(random: Random, life: Life, traits: Archetype, ads?: AdPlan): (PlannedEvent & { offsetMs: number })[] {
  const out: (PlannedEvent & { offsetMs: number })[] = [];
  const add = (name: string, offsetMs: number, extra: Partial<PlannedEvent> = {}, ids: Random = random) => {
    if (offsetMs >= life.endOffsetMs) return;
    out.push({ event_id: ids.uuid(), event_name: name, install_uuid: life.installUuid, time: life.at(offsetMs), offsetMs, ...extra });
  };
  let showcased = false;
  const adImpressions = (plan: AdPlan, startMs: number): void => {
    const r = plan.random;
    let t = startMs;
    // Two at least in the showcase's first session: one reported twice by the SDK, one by the SDK and the server.
    const showcase: AdDelivery[] = plan.showcase && !showcased ? ['sdk_twice', 'sdk_and_s2s', 's2s'] : [];
    showcased ||= plan.showcase;
    for (let n = Math.max(r.int(1, 3), showcase.length), i = 0; i < n; i++) {
      t += r.int(10_000, 60_000);
      const format = r.weighted({
        banner: AD_FORMATS.banner.weight,
        interstitial: AD_FORMATS.interstitial.weight,
        rewarded: AD_FORMATS.rewarded.weight,
      });
      const source = r.weighted({
        applovin_max: AD_SOURCES.applovin_max.weight,
        admob: AD_SOURCES.admob.weight,
        ironsource_levelplay: AD_SOURCES.ironsource_levelplay.weight,
      });
      const [low, high] = AD_FORMATS[format].usd;
      const eur = r.chance(AD_EUR_SHARE);
      const impression: AdImpression = {
        source,
        network: r.pick(AD_SOURCES[source].networks),
        format,
        placement: r.pick(AD_FORMATS[format].placements),
        ad_unit: `${source}-${format}`,
        // Six decimals, as the mediation SDKs report it; in euros at about the sim's rates.
        revenue: Math.round(r.between(low, high) * (eur ? 0.92 : 1) * 1e6) / 1e6,
        currency: eur ? 'EUR' : 'USD',
        precision: r.chance(0.7) ? 'exact' : 'estimated',
        impression_id: r.uuid(),
      };
      const delivery: AdDelivery =
        showcase[i] ??
        (r.chance(AD_DUPLICATE_SHARE) ? r.pick(['sdk_twice', 'sdk_and_s2s'] as const) : r.chance(AD_S2S_SHARE) ? 's2s' : 'sdk');
      const vias = AD_VIAS[delivery];
      for (const via of vias) add('ad_revenue', t, { ad_revenue: impression, ...(via === 's2s' ? { via } : {}) }, r);
    }
  };
  let tutorial = false;
  let trial = false;
  const session = (startMs: number, firstOfLife: boolean) => {
    add('session_start', startMs);
    let t = startMs;
    if (firstOfLife && random.chance(0.7)) {
      t += random.int(20_000, 120_000);
      add('tutorial_complete', t);
      tutorial = true;
    }
    for (let i = random.int(1, 5); i > 0; i--) {
      t += random.int(5_000, 90_000);
      const name = random.weighted({ screen_view: 5, level_complete: 3, add_to_cart: 1, share: 1 });
      add(name, t, {
        properties:
          name === 'screen_view' ? { screen: random.pick(SCREENS) } : name === 'level_complete' ? { level: random.int(1, 60) } : {},
      });
    }
    if (!trial && tutorial && random.chance(0.03)) {
      // A free trial is a revenue event of 0: counted as an event, never as a purchase.
      trial = true;
      t += random.int(5_000, 30_000);
      add('start_trial', t, { revenue_usd: 0 });
    }
    if (random.chance(traits.purchaseChance * (firstOfLife ? 1.5 : 1))) {
      t += random.int(5_000, 60_000);
      const sku = `gems_${random.int(1, 6)}`;
      const store = random.weighted({ usd: 70, eur: 20, jpy: 10 });
      if (store === 'usd') {
        const usd = Math.round(random.pick(PRICES) * random.pick(FX) * 1e6) / 1e6;
        add('purchase', t, { revenue_usd: usd, properties: { sku, currency: 'USD' } });
      } else {
        // Sent as the store charged it; the service converts at the rate of the event's day.
        const revenue =
          store === 'eur' ? { amount: random.pick(PRICES), currency: 'EUR' } : { amount: random.pick(YEN_PRICES), currency: 'JPY' };
        add('purchase', t, { revenue, properties: { sku } });
      }
    }
    if (ads) adImpressions(ads, t);
  };
  session(random.int(800, 3_000), true);
  // Later sessions sit well inside their day of life (5 min from either end), so that retention
  // windows [N x 24h, (N+1) x 24h) after the install never depend on a few milliseconds of skew.
  for (let day = 1; day * DAY < life.endOffsetMs; day++) {
    const active = (traits.loyal && (day === 1 || day === 7 || day === 30)) || (day < traits.churnDay && random.chance(traits.activeShare));
    if (!active) continue;
    const starts = Array.from(
      { length: random.int(1, traits.loyal ? 3 : 2) },
      () => day * DAY + random.int(5 * MINUTE, DAY - 20 * MINUTE),
    ).sort((a, b) => a - b);
    for (const s of starts) session(s, false);
  }
  return out.sort((a, b) => a.offsetMs - b.offsetMs);
}

function malformed(random: Random, like: PlannedEvent): PlannedEvent {
  const base = { event_id: random.uuid(), install_uuid: like.install_uuid, ts_ms: 0 };
  const [reason, event] = random.pick<[string, Record<string, unknown>]>([
    ['bad_event_name', { ...base, event_name: 'level complete' }],
    ['bad_revenue', { ...base, event_name: 'purchase', revenue_usd: -4.99 }],
    ['bad_attribution', { ...base, event_name: 'session_start', attribution: { click_id: 'x' } }],
  ]);
  return {
    ...like,
    event_id: base.event_id,
    event_name: String(event.event_name),
    revenue_usd: undefined,
    revenue: undefined,
    ad_revenue: undefined,
    via: undefined,
    malformed: { reason, event },
  };
}

/** Half-way between the click and the install: when the Play download began. */
function halfway(install: Moment): Moment {
  return 'at' in install ? install : { ...install, ms: Math.round(install.ms / 2) };
}

/** Installs grow a little over the period; none within 10 minutes of the present. */
function installTime(random: Random, fromMs: number, toMs: number): number {
  return avoidMidnight(fromMs + random.next() ** 0.8 * (toMs - 10 * MINUTE - fromMs));
}

function between(random: Random, fromMs: number, toMs: number): number {
  return avoidMidnight(fromMs + random.next() * (toMs - fromMs));
}

/** Keeps an install a minute clear of a UTC midnight, so its day never depends on the skew correction. */
function avoidMidnight(ms: number): number {
  const intoDay = ((ms % DAY) + DAY) % DAY;
  return Math.round(intoDay < MINUTE ? ms + MINUTE : intoDay > DAY - MINUTE ? ms - MINUTE : ms);
}

/** Fisher-Yates; items hold no undefined, so an undefined one is an index out of range. */
function shuffle<T extends NonNullable<unknown>>(random: Random, items: T[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    const [a, b] = [items[i], items[j]];
    if (a === undefined || b === undefined) throw new Error(`shuffle: ${i} or ${j} is outside ${items.length} items`);
    items[i] = b;
    items[j] = a;
  }
}
