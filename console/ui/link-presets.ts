/**
 * The Tracking links page's rules, DOM-free so the unit tests run them in node: partner presets
 * (which of the link URL's click_id and sub1..sub5 carry which of the network's own click macros),
 * the duplicate check before `link create`, and the conversion rate per link.
 *
 * Presets are a starting point: the macro names are as each network documents them for a
 * measurement partner's click URL (the `docs` of each), and the network's current documentation
 * is the authority (docs/console-analytics.md, "Tracking links").
 */

/**
 * The click parameters a preset may fill: the redirect's (functions/domain/links/partner-url.ts
 * CLICK_PARAMS) but mobile_only, the link owner's choice, not the network's. Not imported: that
 * module's neighbours use node:crypto, which the browser bundle has not (the unit test checks the two agree).
 */
export const PRESET_PARAMS = ['click_id', 'sub1', 'sub2', 'sub3', 'sub4', 'sub5'] as const;
export type PresetParam = (typeof PRESET_PARAMS)[number];

export interface LinkPreset {
  /** The partner name the service uses for the network (links, postbacks, reports). */
  readonly partner: string;
  /** The network's name as a marketer knows it. */
  readonly label: string;
  /** The network's macro for each parameter, written as the network writes it. */
  readonly params: Readonly<Partial<Record<PresetParam, string>>>;
  /** What each macro stands for, shown beside the field. */
  readonly meaning: Readonly<Partial<Record<PresetParam, string>>>;
  /** Where the network documents its macros. */
  readonly docs: string;
  /** Said when the preset is chosen (a network without a click id macro, one without a click URL). */
  readonly note?: string;
  /** False for a network measured without a tracking link (Apple Ads, through AdServices). */
  readonly clickUrl: boolean;
}

export const LINK_PRESETS: readonly LinkPreset[] = [
  {
    partner: 'meta',
    label: 'Meta (Facebook, Instagram)',
    params: { sub1: '{{campaign.id}}', sub2: '{{adset.id}}', sub3: '{{ad.id}}', sub4: '{{site_source_name}}', sub5: '{{placement}}' },
    meaning: { sub1: 'campaign id', sub2: 'ad set id', sub3: 'ad id', sub4: 'site source (fb, ig, an, msg)', sub5: 'placement' },
    docs: 'Meta Business Help Center, "URL parameters" (dynamic parameters)',
    note: 'Meta has no click id macro: leave click_id empty (Meta adds its own fbclid).',
    clickUrl: true,
  },
  {
    partner: 'google_ads',
    label: 'Google Ads',
    params: { click_id: '{gclid}', sub1: '{campaignid}', sub2: '{adgroupid}', sub3: '{creative}', sub4: '{keyword}', sub5: '{network}' },
    meaning: { click_id: 'gclid', sub1: 'campaign id', sub2: 'ad group id', sub3: 'ad (creative) id', sub4: 'keyword', sub5: 'network' },
    docs: 'https://support.google.com/google-ads/answer/6305348',
    clickUrl: true,
  },
  {
    partner: 'tiktok',
    label: 'TikTok',
    params: {
      click_id: '__CALLBACK_PARAM__',
      sub1: '__CAMPAIGN_ID__',
      sub2: '__AID__',
      sub3: '__CID__',
      sub4: '__PLACEMENT__',
      sub5: '__CAMPAIGN_NAME__',
    },
    meaning: {
      click_id: 'callback (click) id',
      sub1: 'campaign id',
      sub2: 'ad group id',
      sub3: 'ad (creative) id',
      sub4: 'placement',
      sub5: 'campaign name',
    },
    docs: 'https://ads.tiktok.com/help/article/mobile-measurement-partner-mmp-tracking',
    clickUrl: true,
  },
  {
    partner: 'snapchat',
    label: 'Snapchat',
    params: { sub1: '{{campaign.id}}', sub2: '{{adSet.id}}', sub3: '{{ad.id}}', sub4: '{{campaign.name}}', sub5: '{{adSet.name}}' },
    meaning: { sub1: 'campaign id', sub2: 'ad set id', sub3: 'ad id', sub4: 'campaign name', sub5: 'ad set name' },
    docs: 'Snapchat Business Help Center, "URL macros"',
    note: 'Snapchat has no click id macro: leave click_id empty.',
    clickUrl: true,
  },
  {
    partner: 'x',
    label: 'X (Twitter)',
    params: {},
    meaning: {},
    docs: 'X Business Help Center, conversion tracking (twclid)',
    note: 'X adds its own click id (twclid) to the URL and has no campaign macros for a tracking link: use sub1..sub5 for names of your own.',
    clickUrl: true,
  },
  {
    partner: 'unity_ads',
    label: 'Unity Ads',
    params: { sub1: '{campaign_id}', sub2: '{campaign_name}', sub3: '{source_app_id}', sub4: '{creative_pack_id}', sub5: '{platform}' },
    meaning: { sub1: 'campaign id', sub2: 'campaign name', sub3: 'publisher app id', sub4: 'creative pack id', sub5: 'platform' },
    docs: 'https://docs.unity.com/en-us/grow/acquire/partner-integration/attribution/link-parameters',
    note: "Unity's documented tokens carry no click id of its own: leave click_id empty, or ask your Unity contact for one.",
    clickUrl: true,
  },
  {
    partner: 'applovin',
    label: 'AppLovin (Axon)',
    params: {
      click_id: '{EVENT_ID}',
      sub1: '{CAMPAIGN_ID}',
      sub2: '{CAMPAIGN_NAME}',
      sub3: '{CREATIVE_SET_ID}',
      sub4: '{APP_ID}',
      sub5: '{AD_TYPE}',
    },
    meaning: {
      click_id: 'ad request (event) id',
      sub1: 'campaign id',
      sub2: 'campaign name',
      sub3: 'creative set id',
      sub4: 'publisher app id (hashed)',
      sub5: 'ad type',
    },
    docs: 'https://support.axon.ai/en/growth/promoting-your-apps/tracking/tracking-url-macros',
    clickUrl: true,
  },
  {
    partner: 'ironsource',
    label: 'ironSource (Unity LevelPlay)',
    params: { sub1: '{CampaignId}', sub2: '{CampaignName}', sub3: '{ApplicationId}', sub4: '{CreativeId}', sub5: '{AdType}' },
    meaning: { sub1: 'campaign id', sub2: 'campaign name', sub3: 'publisher app id', sub4: 'creative id', sub5: 'ad type' },
    docs: 'https://developers.is.com/ironsource-mobile/general/tracking-solutions/',
    note: "ironSource's placeholder list names no click id: leave click_id empty, or ask your ironSource contact for one.",
    clickUrl: true,
  },
  {
    partner: 'liftoff',
    label: 'Liftoff',
    params: {
      click_id: '{TRACKING_TOKEN}',
      sub1: '{CAMPAIGN_ID}',
      sub2: '{CAMPAIGN_NAME}',
      sub3: '{CREATIVE_ID}',
      sub4: '{CREATIVE_NAME}',
    },
    meaning: { click_id: 'tracking token', sub1: 'campaign id', sub2: 'campaign name', sub3: 'creative id', sub4: 'creative name' },
    docs: 'https://docs.liftoff.io/advertiser/direct/self_attribution',
    clickUrl: true,
  },
  {
    partner: 'mintegral',
    label: 'Mintegral',
    params: {
      click_id: '{click_id}',
      sub1: '{adv_campaign_id}',
      sub2: '{offer_name}',
      sub3: '{creative_id}',
      sub4: '{creative_name}',
      sub5: '{affiliate_id}',
    },
    meaning: {
      click_id: 'click id',
      sub1: 'campaign id',
      sub2: 'offer name',
      sub3: 'creative id',
      sub4: 'creative name',
      sub5: 'sub-channel id',
    },
    docs: 'https://helpcenter.mintegral.com/en/docs/integration-parameter',
    clickUrl: true,
  },
  // Moloco writes its macros %{bid_id}: the URL builder (functions/domain/links/partner-url.ts)
  // keeps {bid_id} literal but encodes the % before it, so Moloco gets no preset until it keeps
  // that form too; a Moloco link is made with the fields typed in.
  {
    partner: 'apple_search_ads',
    label: 'Apple Ads (Search Ads)',
    params: {},
    meaning: {},
    docs: 'docs/ios.md, section 4',
    note: 'Apple Ads has no click URL: its installs are measured through the AdServices token the app sends with its install event (docs/ios.md, section 4). No tracking link is needed.',
    clickUrl: false,
  },
];

export const presetFor = (partner: string | undefined): LinkPreset | undefined =>
  partner === undefined ? undefined : LINK_PRESETS.find((preset) => preset.partner === partner.trim());

/** The preset as `link try` flags (`--click-id`, `--sub1`..): the command builds the URL, macros kept literal. */
export function presetTryFlags(preset: LinkPreset): Record<string, string> {
  const flags: Record<string, string> = {};
  for (const param of PRESET_PARAMS) {
    const macro = preset.params[param];
    if (macro !== undefined) flags[param === 'click_id' ? 'click-id' : param] = macro;
  }
  return flags;
}

/** The preset a listed link's Copy button uses: its partner's, when that network has a click URL. */
export const copyPreset = (partner: string): LinkPreset | undefined => {
  const preset = presetFor(partner);
  return preset?.clickUrl ? preset : undefined;
};

/** What makes two links the same link to a marketer: partner, campaign, destinations, honeypot. */
export interface LinkIdentity {
  readonly partner: string;
  readonly campaign?: string;
  readonly ios_url?: string;
  readonly android_url?: string;
  readonly web_url?: string;
  readonly honeypot?: boolean;
}

export interface ListedLink extends LinkIdentity {
  readonly link_id: string;
  readonly disabled?: boolean;
}

/** A blank field is no value, as `link create` reads it. */
const norm = (value: string | undefined): string => (value ?? '').trim();

/** The app's store URLs: `link create` copies them into a link made without destinations of its own. */
export interface AppDestinations {
  readonly ios_url?: string;
  readonly android_url?: string;
  readonly web_url?: string;
}

/**
 * The first existing link that is the same as the one about to be created, if any: the candidate's
 * blank destinations are the app's, as the link would be stored.
 */
export function findDuplicate<L extends ListedLink>(
  links: readonly L[],
  candidate: LinkIdentity,
  app: AppDestinations = {},
): L | undefined {
  const destination = (field: keyof AppDestinations) => norm(candidate[field]) || norm(app[field]);
  return links.find(
    (link) =>
      norm(link.partner) === norm(candidate.partner) &&
      norm(link.campaign) === norm(candidate.campaign) &&
      norm(link.ios_url) === destination('ios_url') &&
      norm(link.android_url) === destination('android_url') &&
      norm(link.web_url) === destination('web_url') &&
      Boolean(link.honeypot) === Boolean(candidate.honeypot),
  );
}

/** "A link for meta / spring_sale already exists (L...): create another anyway?" */
export function duplicateWarning(existing: ListedLink): string {
  const name = existing.campaign ? `${existing.partner} / ${existing.campaign}` : `${existing.partner} (no campaign)`;
  const state = existing.disabled ? ', disabled' : '';
  return `A link for ${name} already exists (${existing.link_id}${state}): create another anyway?`;
}

/** installs / clicks, undefined without clicks (shown blank, never 0 %). */
export const conversionRate = (clicks: number, installs: number): number | undefined => (clicks > 0 ? installs / clicks : undefined);

export interface LinkStat {
  readonly link_id: string;
  readonly clicks: number;
  readonly installs: number;
}

/** Each link's clicks and installs from `link stats` (0 for a link it does not name). */
export function statsByLink(stats: readonly LinkStat[]): (linkId: string) => { clicks: number; installs: number } {
  const byId = new Map(stats.map((s) => [s.link_id, s]));
  return (linkId) => {
    const found = byId.get(linkId);
    return { clicks: found?.clicks ?? 0, installs: found?.installs ?? 0 };
  };
}
