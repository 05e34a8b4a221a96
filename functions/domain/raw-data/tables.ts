/**
 * The four raw tables the warehouse export writes and the SQL reads (docs/raw-data.md#warehouse-exports):
 * their columns, in file order, each with one of four types that Parquet (hyparquet-writer),
 * Glue/Athena and DuckDB all read the same way. JSON values (properties, fraud_reasons, a
 * decision) are JSON text in a string column. Every column may be null.
 *
 * The partition columns are not stored in the files: they are the Hive-style path
 * `<table>/app_id=<id>/dt=<yyyy-MM-dd>/hour=<HH>/` (PARTITION_COLUMNS).
 */

export type RawTableName = 'events' | 'installs' | 'clicks' | 'skan_postbacks';
export type RawColumnType = 'string' | 'bigint' | 'double' | 'boolean';

export interface RawColumn {
  readonly name: string;
  readonly type: RawColumnType;
  readonly doc: string;
}

export interface RawTable {
  readonly columns: readonly RawColumn[];
}

/** Every table is partitioned by these, all strings, in this order. */
export const PARTITION_COLUMNS: readonly RawColumn[] = [
  { name: 'app_id', type: 'string', doc: 'The app (skan_postbacks: `_unmatched` while postbacks are not matched to an app).' },
  { name: 'dt', type: 'string', doc: 'UTC day of the receive time, yyyy-MM-dd.' },
  { name: 'hour', type: 'string', doc: 'UTC hour of the receive time, HH (00-23).' },
];

export const RAW_TABLE_NAMES: readonly RawTableName[] = ['events', 'installs', 'clicks', 'skan_postbacks'];

/** The skan_postbacks partition of a postback that names no app of the service (all of them, until matching by App Store id). */
export const UNMATCHED_APP_ID = '_unmatched';

const s = (name: string, doc: string): RawColumn => ({ name, type: 'string', doc });
const n = (name: string, doc: string): RawColumn => ({ name, type: 'bigint', doc });
const d = (name: string, doc: string): RawColumn => ({ name, type: 'double', doc });
const b = (name: string, doc: string): RawColumn => ({ name, type: 'boolean', doc });

const SUBS = [1, 2, 3, 4, 5].map((i) => s(`sub${i}`, `sub${i} of the click (pass-through).`));

/**
 * The install's latest consent the service knew when it counted the event (the stream line's
 * `consent`, docs/privacy.md, "Consent"): every column null when none was known.
 */
const CONSENT = [
  b('consent_gdpr_applies', "The GDPR applies to the user (Google's eea); null when the app did not say."),
  s('consent_tcf_string', "The IAB TCF v2 consent string from the app's CMP; null when none."),
  b('consent_ad_user_data', "Google's Consent Mode ad_user_data; null when the app did not say."),
  b('consent_ad_personalization', "Google's Consent Mode ad_personalization; null when the app did not say."),
  b('consent_third_party_sharing', 'Sharing with ad partners where the TCF does not apply; null when the app did not say.'),
  b('consent_measurement', 'Measurement itself; null when the app did not say.'),
  n(
    'consent_ts',
    "Corrected time of the event that said the consent, epoch ms: an install's latest consent is on its row with the largest.",
  ),
  s('consent_event_id', 'event_id of the event that said the consent.'),
];

export const RAW_TABLES: Readonly<Record<RawTableName, RawTable>> = {
  events: {
    columns: [
      s('event_id', "The event's id as the SDK sent it; (app, install_uuid, event_id) is its identity."),
      s('event_name', 'install, open, purchase or a custom name.'),
      s('install_uuid', 'The install the event belongs to.'),
      n('ts_ms', 'Device time of the event, epoch ms, as sent.'),
      n('corrected_ts', 'Event time on the server clock, epoch ms (ts_ms moved by the batch clock skew).'),
      n('received_ms', 'When the batch was accepted, epoch ms: the partition hour.'),
      s(
        'event_day',
        'UTC day of corrected_ts, yyyy-MM-dd: the reports count the local day of corrected_ts in the time zone of the app instead.',
      ),
      d('revenue_usd', 'Revenue in US dollars as sent; null when absent.'),
      n('revenue_micros', 'round(revenue_usd * 1e6) as the reports add it up; 0 when there is no positive revenue.'),
      s('platform', 'ios or android; null when unknown.'),
      s('properties', 'Custom properties, JSON text; null when absent.'),
      s(
        'country',
        'Country of the click the install it counts against matched, else of the request that carried the event (viewer country); null when unknown.',
      ),
      s('partner', 'Partner of the install the event counts against (organic when none); null when attribution is null.'),
      s('campaign', 'Campaign of the attributed link.'),
      s('attribution_type', 'deterministic, probabilistic or organic.'),
      s('link_id', 'Tracking link of the attributed click.'),
      s('ext_click_id', "The partner's own click id, from the attributed click."),
      ...SUBS,
      b('is_reinstall', 'The install it counts against is a reinstall.'),
      s('fraud_reasons', "JSON text array of the install's fraud flags."),
      n('install_corrected_ts', 'Corrected time of the install it counts against, epoch ms (cohort day).'),
      s(
        'install_event_id',
        'event_id of the install it counts against. Null when attribution is null: the event arrived before its install was counted and counts against the first counted install of its install_uuid (join installs on first_install).',
      ),
      s(
        'ad_source',
        'ad_revenue events: the mediation platform (applovin_max, ironsource_levelplay, admob, unity, custom); null on other events.',
      ),
      s('ad_network', 'ad_revenue events: the ad network that served the impression.'),
      s('ad_format', 'ad_revenue events: banner, interstitial, rewarded, app_open, native or other.'),
      s('ad_placement', 'ad_revenue events: the placement, as sent; null when absent.'),
      s('ad_unit', 'ad_revenue events: the ad unit, as sent; null when absent.'),
      s('ad_precision', 'ad_revenue events: exact, estimated or publisher_defined.'),
      s(
        'impression_id',
        'ad_revenue events: the impression; an install counts each impression_id once (the row of a duplicate is not in the export).',
      ),
      d('ad_revenue', 'ad_revenue events: the impression revenue in ad_currency, as sent (revenue_usd holds it in US dollars).'),
      s('ad_currency', 'ad_revenue events: the ISO 4217 code of ad_revenue.'),
      ...CONSENT,
      s('transaction_id', 'The store transaction id the event (a purchase) carried, which a refund may name; null when absent.'),
      s(
        'refund_purchase_event_id',
        'refund events: the event_id of the refunded purchase, as sent (it wins over refund_transaction_id); null when absent and on other events.',
      ),
      s('refund_transaction_id', 'refund events: the transaction_id of the refunded purchase, as sent; null when absent.'),
      d(
        'refund_revenue',
        'refund events: the amount asked back in refund_currency, as sent (revenue_usd holds it in US dollars; the performance report counts at most what the purchase has left).',
      ),
      s('refund_currency', 'refund events: the ISO 4217 code of refund_revenue.'),
    ],
  },
  installs: {
    columns: [
      s('install_uuid', 'The install.'),
      s('install_event_id', 'event_id of the install event (one row per counted install event).'),
      n('ts_ms', 'Device time of the install event, epoch ms.'),
      n('corrected_ts', 'Install time on the server clock, epoch ms.'),
      n('received_ms', 'When the batch was accepted, epoch ms: the partition hour.'),
      s('install_day', 'UTC day of corrected_ts, yyyy-MM-dd: the cohort day is the local day of corrected_ts in the time zone of the app.'),
      s('platform', 'ios or android.'),
      s('country', 'Country of the matched click, else of the install request.'),
      s('partner', 'Partner the install is attributed to (organic when no click matched).'),
      s('campaign', 'Campaign of the matched link.'),
      s('attribution_type', 'deterministic, probabilistic or organic.'),
      s('rule', 'click_id, referrer_click_id, adservices_token, same_ip_platform_24h, first_launch_answer or no_match.'),
      s('link_id', 'Link of the matched click.'),
      s('click_id', 'The matched click (join clicks).'),
      s('ext_click_id', "The partner's own click id of the matched click."),
      ...SUBS,
      n('click_ms', 'Time of the matched click, epoch ms.'),
      n('ctit_seconds', 'Seconds from the matched click to the install.'),
      b('is_reinstall', 'The install is a reinstall.'),
      s('reinstall_reason', 'same_install_uuid or device_seen_under_other_install.'),
      s('fraud_reasons', 'JSON text array: ctit_under_10s, click_injection, honeypot_ip.'),
      b('first_install', 'No install of this install_uuid was counted before it.'),
      s('previous_install_event_id', 'event_id of the install of this install_uuid counted before it, if any.'),
      s('explanation', 'Why, in one sentence (what `admin install show` prints).'),
      s('decision', 'The full attribution decision, JSON text.'),
      ...CONSENT,
    ],
  },
  clicks: {
    columns: [
      s('click_id', 'The click, a server-made id.'),
      s('link_id', 'The tracking link.'),
      s('company_id', "The link's company."),
      s('partner', "The link's partner."),
      s('campaign', "The link's campaign."),
      s('ext_click_id', "The partner's click id (the click_id query parameter)."),
      ...SUBS,
      s('platform', 'ios, android or desktop, from the user agent.'),
      s('user_agent', 'User-Agent header as sent (cut to 1,024 characters).'),
      s('country', 'Country of the viewer, from the edge.'),
      n('asn', 'Autonomous system of the viewer, from the edge.'),
      n('ts_ms', 'When the click was recorded, epoch ms: the partition hour.'),
      n('lookback_days', "The link's attribution lookback."),
      n('expires_at', 'Epoch seconds after which no install can claim the click.'),
    ],
  },
  skan_postbacks: {
    columns: [
      s('transaction_id', "SKAdNetwork's transaction-id, AdAttributionKit's postback-identifier."),
      s('kind', 'skadnetwork or adattributionkit.'),
      n('received_ms', 'When the postback was received, epoch ms: the partition hour.'),
      b('verified', "The signature verified under one of Apple's keys."),
      s('reason', 'Why it did not verify; null when it did.'),
      s('reason_field', 'The signed field a failure is about.'),
      s('key_id', 'The key checked (skadnetwork/p-256, skadnetwork/p-192, or an AdAttributionKit kid).'),
      s('key_environment', 'AdAttributionKit: production or development key.'),
      s('version', 'SKAdNetwork version as sent.'),
      s(
        'ad_network_id',
        'ad-network-id (AdAttributionKit: ad-network-identifier). Signed (see `signed` for which fields the version covers).',
      ),
      s('advertised_app_id', 'App Store id of the advertised app: app-id (advertised-item-identifier). Signed.'),
      s('campaign_id', 'campaign-id (SKAdNetwork before 4.0). Signed.'),
      s('source_identifier', 'source-identifier (SKAdNetwork 4.0, AdAttributionKit). Signed.'),
      s('source_app_id', 'App Store id of the publishing app: source-app-id (publisher-item-identifier). Signed.'),
      s('source_domain', 'source-domain (web ads). Signed.'),
      s('marketplace_identifier', 'AdAttributionKit marketplace-identifier. Signed.'),
      n('fidelity_type', 'fidelity-type: 1 StoreKit-rendered ad, 0 view-through. Signed.'),
      s('impression_type', 'AdAttributionKit impression-type. Signed.'),
      b('redownload', 'SKAdNetwork redownload. Signed.'),
      s('conversion_type', 'AdAttributionKit conversion-type, as sent. Signed.'),
      b('did_win', 'did-win. Signed.'),
      n('postback_sequence_index', 'postback-sequence-index: 0, 1 or 2. Signed.'),
      n('conversion_value', 'Fine conversion value 0-63. Not signed by Apple.'),
      s('coarse_conversion_value', 'low, medium or high. Not signed by Apple.'),
      s('ad_interaction_type', 'AdAttributionKit ad-interaction-type. Not signed by Apple.'),
      s('country_code', 'AdAttributionKit country-code. Not signed by Apple.'),
      s('signed', "Every signed field as sent, JSON text (Apple's only when verified)."),
      s('unverified', 'Every unsigned field as sent, JSON text.'),
    ],
  },
};
