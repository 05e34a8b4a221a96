import { type KeyObject, sign } from 'node:crypto';
import { compareRowSets, type Difference, fetchReportRows, type ReportRow, type ReportWindow } from './check';
import { localDay } from './local-days';
import type { Random } from './random';

/**
 * Apple's postbacks as the simulator sends them to POST /skan-postback, and the SKAN report
 * (GET /api/v1/reports/skan, docs/ios.md section 3) they should make. Each app gets a conversion-
 * value schema (two versions: postbacks received before the second is set keep the first's
 * estimates), ad network ids mapped to partners (one left unmapped: it reports as the id), and
 * SKAdNetwork 4.0 and AdAttributionKit postbacks for windows 0, 1 and 2 with a fine, a coarse or no
 * value, signed with the local runtime's test key; with Apple's retries (copies, one replayed with
 * another unsigned value), tampered ones and postbacks for an app nobody has.
 *
 * The oracle is written from the contract, not from the service's code: its own copy of Apple's
 * 4.0 field order (the unit test checks the service verifies what it signs), its own decoding of a
 * value through a schema (in whole cents: every range's middle is a whole cent), its own rule for
 * which delivery of a transaction id counts.
 */

export type Coarse = 'low' | 'medium' | 'high';
export type PostbackWindow = 0 | 1 | 2;
export type PostbackKind = 'skadnetwork' | 'adattributionkit';
export type ConversionType = 'download' | 'redownload' | 're-engagement';
export type ConversionValue = { fine: number } | { coarse: Coarse } | undefined;

/** A schema file (docs/ios.md section 1), with every range's ends in whole cents and their sum even. */
export interface SchemaFile {
  fine: { value: number; revenue_usd: [number, number]; events?: string[] }[];
  coarse: { window: PostbackWindow; value: Coarse; revenue_usd: [number, number]; events?: string[] }[];
  lock?: { window: PostbackWindow; events: string[] }[];
}

export interface PlannedPostback {
  kind: PostbackKind;
  /** transaction-id (SKAdNetwork) or postback-identifier (AdAttributionKit). */
  id: string;
  /** app-id / advertised-item-identifier: the app's App Store id, or one no app has. */
  appId: string;
  unknownApp: boolean;
  adNetworkId: string;
  sourceIdentifier: string;
  window: PostbackWindow;
  /** SKAdNetwork fidelity-type; AdAttributionKit: 1 for an app-impression, 0 for a web one. */
  fidelity: 0 | 1;
  conversion: ConversionType;
  value: ConversionValue;
  /** SKAdNetwork 4.0: the publisher app (an app ad) or the web page (a web ad), or neither (crowd anonymity). */
  source?: { appId: number } | { domain: string };
}

/** One POST: a postback, or a copy of it (Apple's retry), tampered or with another unsigned value. */
export interface Delivery {
  postback: PlannedPostback;
  /** A signed field changed after signing: the signature fails. */
  tampered: boolean;
  /** A copy whose unsigned conversion value differs from the first delivery's. */
  replayValue?: ConversionValue;
  /** 0: before the second schema version is set; 1: after. */
  phase: 0 | 1;
}

export interface SkanPlan {
  /** Version 1 and version 2, set in that order. */
  schemas: [SchemaFile, SchemaFile];
  /** Ad network id to partner: `admin skan network set`. */
  networks: Record<string, string>;
  /** Ids some postbacks carry that are mapped to nobody: reported as the id itself. */
  unmapped: string[];
  deliveries: Delivery[];
}

const PARTNERS = ['meta', 'google_ads', 'tiktok', 'applovin'] as const;
const LOCK_EVENTS = ['purchase'];

/** A range in whole cents whose middle is a whole cent (min + max even), as a schema's dollars. */
function range(random: Random, baseCents: number): [number, number] {
  const min = baseCents + 2 * random.int(0, 60);
  const max = min + 2 * random.int(0, 400);
  return [min / 100, max / 100];
}

/**
 * Version 1: fine values 0 to 47 (0 is "installed, nothing more": no revenue; 48 to 63 are left out
 * and decode to no revenue), coarse values per window but window 2's `low`. Version 2: every range a
 * dollar higher, value 47 dropped and 50 added, window 2's `low` present.
 */
export function planSchemas(random: Random): [SchemaFile, SchemaFile] {
  const fine: SchemaFile['fine'] = [{ value: 0, revenue_usd: [0, 0] }];
  for (let value = 1; value <= 47; value++)
    fine.push({ value, revenue_usd: range(random, value * 150), ...(value % 8 === 0 ? { events: ['purchase'] } : {}) });
  const coarse: SchemaFile['coarse'] = [];
  for (const window of [0, 1, 2] as const)
    for (const [i, value] of (['low', 'medium', 'high'] as const).entries())
      if (!(window === 2 && value === 'low'))
        coarse.push({ window, value, revenue_usd: range(random, 100 + i * 1500 + window * 500), events: i === 2 ? ['purchase'] : [] });
  const v1: SchemaFile = { fine, coarse, lock: [{ window: 0, events: LOCK_EVENTS }] };
  const up = ([min, max]: [number, number]): [number, number] => [(Math.round(min * 100) + 100) / 100, (Math.round(max * 100) + 100) / 100];
  const v2: SchemaFile = {
    fine: [
      ...fine.filter((e) => e.value !== 47).map((e) => ({ ...e, revenue_usd: up(e.revenue_usd) })),
      { value: 50, revenue_usd: range(random, 9000) },
    ],
    coarse: [...coarse.map((e) => ({ ...e, revenue_usd: up(e.revenue_usd) })), { window: 2, value: 'low', revenue_usd: range(random, 40) }],
    lock: v1.lock,
  };
  return [v1, v2];
}

/** The value shapes each window can carry: fine only in window 0 (Apple's high postback data tier). */
const SHAPES: readonly { kind: PostbackKind; window: PostbackWindow; value: 'fine' | 'coarse' | 'none' }[] = (
  ['skadnetwork', 'adattributionkit'] as const
).flatMap((kind) => [
  { kind, window: 0 as const, value: 'fine' as const },
  { kind, window: 0 as const, value: 'coarse' as const },
  { kind, window: 0 as const, value: 'none' as const },
  ...([1, 2] as const).flatMap((window) => [
    { kind, window, value: 'coarse' as const },
    { kind, window, value: 'none' as const },
  ]),
]);

export interface SkanPlanOptions {
  /** The app's App Store id. */
  appStoreId: string;
  /** An App Store id no app has. */
  unknownAppStoreId: string;
  /** Postbacks beyond the one of each shape. */
  extra: number;
  /**
   * 8 hex digits of the run, the first of every transaction id: Apple's ids are unique, and the
   * service files each once whoever sends it, so a second run with the same seed needs its own.
   */
  runId: string;
}

/**
 * The postbacks of one app: one of each (kind, window, value) shape, then `extra` more, some sent
 * again (Apple's retries; one replayed with another unsigned value, one tampered: duplicates both),
 * a tampered one of each kind under a transaction id of its own (counted only in `invalid_postbacks`, once
 * though sent twice), and one of each kind for an unknown app.
 */
export function planSkan(random: Random, options: SkanPlanOptions): SkanPlan {
  const schemas = planSchemas(random);
  const networks: Record<string, string> = {};
  const ids: string[] = [];
  for (const partner of PARTNERS) {
    const id = `${random.hex(10)}.skadnetwork`;
    networks[id] = partner;
    ids.push(id);
  }
  const unmapped = [`${random.hex(10)}.skadnetwork`];
  ids.push(...unmapped);
  // Each network's campaigns: four-digit source identifiers, whose leading two or three digits
  // are all a postback carries when crowd anonymity leaves less (docs: hierarchical source ids).
  const sources = new Map(ids.map((id) => [id, [String(random.int(1000, 9999)), String(random.int(1000, 9999))]]));

  const postback = (
    kind: PostbackKind,
    window: PostbackWindow,
    shape: 'fine' | 'coarse' | 'none',
    appId = options.appStoreId,
    conversionType?: ConversionType,
  ): PlannedPostback => {
    const adNetworkId = random.pick(ids);
    const campaign = random.pick(sources.get(adNetworkId) ?? ['0000']);
    const digits = shape === 'fine' ? 4 : shape === 'coarse' ? 3 : 2;
    const redownloadShare = random.next();
    const conversion: ConversionType =
      conversionType ??
      (kind === 'adattributionkit'
        ? redownloadShare < 0.15
          ? 're-engagement'
          : redownloadShare < 0.3
            ? 'redownload'
            : 'download'
        : redownloadShare < 0.15
          ? 'redownload'
          : 'download');
    const value: ConversionValue =
      shape === 'fine'
        ? { fine: random.chance(0.15) ? random.int(48, 63) : random.int(0, 47) }
        : shape === 'coarse'
          ? { coarse: random.pick(['low', 'medium', 'high'] as const) }
          : undefined;
    const fidelity = random.chance(0.7) ? 1 : 0;
    const sourceKind = random.int(0, 2);
    return {
      kind,
      id: ((id) => (kind === 'skadnetwork' ? id : id.toUpperCase()))(`${options.runId}${random.uuid().slice(8)}`),
      appId,
      unknownApp: appId !== options.appStoreId,
      adNetworkId,
      sourceIdentifier: campaign.slice(0, digits),
      window,
      fidelity,
      conversion,
      value,
      ...(kind === 'skadnetwork' && sourceKind === 1 ? { source: { appId: random.int(100_000_000, 1_999_999_999) } } : {}),
      ...(kind === 'skadnetwork' && sourceKind === 2
        ? { source: { domain: random.pick(['example.com', 'news.example.org', 'recipes.example.net']) } }
        : {}),
    };
  };

  const deliveries: Delivery[] = [];
  const planned = [
    ...SHAPES.map((s) => postback(s.kind, s.window, s.value)),
    // A redownload and a re-engagement, whatever the draws.
    postback('skadnetwork', 1, 'coarse', options.appStoreId, 'redownload'),
    postback('adattributionkit', 0, 'coarse', options.appStoreId, 're-engagement'),
    ...Array.from({ length: options.extra }, () => {
      const s = random.pick(SHAPES);
      return postback(s.kind, s.window, s.value);
    }),
  ];
  for (const [i, p] of planned.entries()) {
    const phase = i % 2 === 0 ? 0 : 1;
    deliveries.push({ postback: p, tampered: false, phase });
    // Apple retries a postback whose 200 it did not see: one to two copies, some after the second schema.
    if (random.chance(0.2)) for (let k = random.int(1, 2); k > 0; k--) deliveries.push({ postback: p, tampered: false, phase: 1 });
  }
  const first = planned[0];
  const coarseOne = planned.find((p) => p.value !== undefined && 'coarse' in p.value);
  if (first && coarseOne) {
    // A copy with another conversion value (unsigned: it verifies) and a tampered copy: both duplicates.
    deliveries.push({
      postback: coarseOne,
      tampered: false,
      replayValue: { coarse: coarseOne.value && 'coarse' in coarseOne.value && coarseOne.value.coarse === 'high' ? 'low' : 'high' },
      phase: 1,
    });
    deliveries.push({ postback: first, tampered: true, phase: 1 });
  }
  // Tampered postbacks under ids of their own, each sent twice: `invalid_postbacks` 1 each.
  for (const kind of ['skadnetwork', 'adattributionkit'] as const) {
    const forged = postback(kind, 0, 'coarse');
    deliveries.push({ postback: forged, tampered: true, phase: 0 }, { postback: forged, tampered: true, phase: 1 });
    deliveries.push({ postback: postback(kind, 0, 'fine', options.unknownAppStoreId), tampered: false, phase: 0 });
  }
  return { schemas, networks, unmapped, deliveries };
}

/** The keys the local runtime trusts beside Apple's (local/skan-test-key.ts): SKAdNetwork's, and AdAttributionKit's with its kid. */
export interface SigningKey {
  skadnetwork: KeyObject;
  adAttributionKit: KeyObject;
  kid: string;
}

/** SKAdNetwork 4.0's signed fields in Apple's order ("Verifying an install-validation postback"); the source one only when present. */
const SKADNETWORK_4_ORDER = [
  'version',
  'ad-network-id',
  'source-identifier',
  'app-id',
  'transaction-id',
  'redownload',
  'source-app-id|source-domain',
  'fidelity-type',
  'did-win',
  'postback-sequence-index',
] as const;
const INVISIBLE_SEPARATOR = '\u2063';

function valueFields(value: ConversionValue): Record<string, unknown> {
  if (value === undefined) return {};
  return 'fine' in value ? { 'conversion-value': value.fine } : { 'coarse-conversion-value': value.coarse };
}

/** A signed field a tamperer changes: the source identifier, to another campaign's. */
const tamperedSource = (source: string) => source.replace(/^./, (d) => String((Number(d) + 1) % 10));

/** A delivery as the JSON body Apple POSTs. */
export function postbackBody(delivery: Delivery, key: SigningKey): Record<string, unknown> {
  const p = delivery.postback;
  const value = valueFields(delivery.replayValue ?? p.value);
  if (p.kind === 'skadnetwork') {
    const signed: Record<string, string | number | boolean> = {
      version: '4.0',
      'ad-network-id': p.adNetworkId,
      'source-identifier': p.sourceIdentifier,
      'app-id': Number(p.appId),
      'transaction-id': p.id,
      redownload: p.conversion === 'redownload',
      ...(p.source && 'appId' in p.source ? { 'source-app-id': p.source.appId } : {}),
      ...(p.source && 'domain' in p.source ? { 'source-domain': p.source.domain } : {}),
      'fidelity-type': p.fidelity,
      'did-win': true,
      'postback-sequence-index': p.window,
    };
    // A tampered postback names p's source identifier, but was signed over another.
    const over = delivery.tampered ? { ...signed, 'source-identifier': tamperedSource(p.sourceIdentifier) } : signed;
    const message = SKADNETWORK_4_ORDER.flatMap((name) =>
      name
        .split('|')
        .filter((n) => over[n] !== undefined)
        .slice(0, 1),
    )
      .map((name) => String(over[name]))
      .join(INVISIBLE_SEPARATOR);
    const signature = sign('sha256', Buffer.from(message, 'utf8'), key.skadnetwork).toString('base64');
    return { ...signed, ...value, 'attribution-signature': signature };
  }
  const payload: Record<string, unknown> = {
    'postback-identifier': p.id,
    'ad-network-identifier': p.adNetworkId,
    'source-identifier': p.sourceIdentifier,
    'advertised-item-identifier': Number(p.appId),
    'publisher-item-identifier': 0,
    'marketplace-identifier': 'com.apple.AppStore',
    'impression-type': p.fidelity === 1 ? 'app-impression' : 'web-impression',
    'conversion-type': p.conversion,
    'did-win': true,
    'postback-sequence-index': p.window,
  };
  const over = delivery.tampered ? { ...payload, 'source-identifier': tamperedSource(p.sourceIdentifier) } : payload;
  const segment = (json: unknown) => Buffer.from(JSON.stringify(json), 'utf8').toString('base64url');
  const header = segment({ kid: key.kid, alg: 'ES256' });
  const signature = sign('sha256', Buffer.from(`${header}.${segment(over)}`, 'ascii'), {
    key: key.adAttributionKit,
    dsaEncoding: 'ieee-p1363',
  });
  return {
    'jws-string': `${header}.${segment(payload)}.${signature.toString('base64url')}`,
    ...value,
    'ad-interaction-type': p.fidelity === 1 ? 'click' : 'view',
    'country-code': 'US',
  };
}

/** What happened to a delivery: the schema version active when it was sent, and when it was sent and answered. */
export interface SentPostback {
  delivery: Delivery;
  schemaVersion: number;
  status: number;
  sentMs: number;
  answeredMs: number;
}

export const SKAN_GROUP_COLUMNS = [
  'day',
  'partner',
  'source_identifier',
  'postback_sequence_index',
  'fidelity_type',
  'conversion_type',
] as const;
const SKAN_COUNTERS = [
  'postbacks',
  'installs',
  'redownloads',
  'with_fine_value',
  'with_coarse_value',
  'without_value',
  'revenue_cents',
] as const;
type SkanCounter = (typeof SKAN_COUNTERS)[number];

/** The middle of a value's range in the schema, in cents (docs/ios.md section 1); 0 for a value absent from it or none. */
export function estimateCents(schema: SchemaFile | undefined, window: PostbackWindow, value: ConversionValue): number {
  if (schema === undefined || value === undefined) return 0;
  const range =
    'fine' in value
      ? window === 0
        ? schema.fine.find((e) => e.value === value.fine)?.revenue_usd
        : undefined
      : schema.coarse.find((e) => e.window === window && e.value === value.coarse)?.revenue_usd;
  if (range === undefined) return 0;
  return (Math.round(range[0] * 100) + Math.round(range[1] * 100)) / 2;
}

export interface SkanExpectation {
  rows: ReportRow[];
  /** Ids a forgery took first: the report's `invalid_postbacks`, in no row. */
  invalid: number;
  /** Deliveries answered across a local midnight: their day cannot be predicted. */
  ambiguous: number;
}

/**
 * The SKAN report's rows from what was sent, by docs/ios.md: per transaction id, the first
 * delivery answered 200 takes it; a verified one counts once in its row, with the estimate of
 * the schema version active when it arrived; a later verified copy is a duplicate; an invalid one
 * makes no row and counts 1 in `invalid` (the report's invalid_postbacks) when it takes a fresh
 * id, and is replaced by a verified one (which then counts too). Unknown apps' postbacks appear
 * nowhere.
 */
export function expectedSkan(
  sent: readonly SentPostback[],
  schemas: ReadonlyMap<number, SchemaFile>,
  partnerOf: (adNetworkId: string) => string,
  zone: string,
): SkanExpectation {
  const holders = new Map<string, 'verified' | 'invalid'>();
  const rows = new Map<string, { columns: ReportRow; n: Record<SkanCounter, number> }>();
  let ambiguous = 0;
  let invalid = 0;
  for (const s of sent) {
    const p = s.delivery.postback;
    if (s.status !== 200 || p.unknownApp) continue;
    const held = holders.get(`${p.kind}|${p.id}`);
    const verified = !s.delivery.tampered;
    if (held === 'verified' || (held === 'invalid' && !verified)) continue;
    holders.set(`${p.kind}|${p.id}`, verified ? 'verified' : 'invalid');
    if (!verified) {
      invalid++;
      continue;
    }
    const day = localDay(s.answeredMs, zone);
    if (day !== localDay(s.sentMs, zone)) ambiguous++;
    const columns: ReportRow = {
      day,
      partner: partnerOf(p.adNetworkId),
      source_identifier: p.sourceIdentifier,
      postback_sequence_index: p.window,
      fidelity_type: p.fidelity,
      conversion_type: p.conversion,
    };
    const key = SKAN_GROUP_COLUMNS.map((c) => String(columns[c])).join('|');
    const row = rows.get(key) ?? { columns, n: Object.fromEntries(SKAN_COUNTERS.map((c) => [c, 0])) as Record<SkanCounter, number> };
    rows.set(key, row);
    const value = s.delivery.replayValue ?? p.value;
    row.n.postbacks++;
    if (p.window === 0 && p.conversion === 'download') row.n.installs++;
    if (p.conversion === 'redownload') row.n.redownloads++;
    if (value !== undefined && 'fine' in value) row.n.with_fine_value++;
    else if (value !== undefined) row.n.with_coarse_value++;
    else row.n.without_value++;
    row.n.revenue_cents += estimateCents(schemas.get(s.schemaVersion), p.window, value);
  }
  return {
    ambiguous,
    invalid,
    rows: [...rows.values()].map(({ columns, n }) => ({
      ...columns,
      postbacks: n.postbacks,
      installs: n.installs,
      redownloads: n.redownloads,
      with_fine_value: n.with_fine_value,
      with_coarse_value: n.with_coarse_value,
      without_value: n.without_value,
      estimated_revenue_usd: n.revenue_cents / 100,
    })),
  };
}

/** Group columns as text (the API may give numbers or strings), dollars to the cent. */
export function normalizeSkan(column: string, value: string | number | boolean): string | number {
  if ((SKAN_GROUP_COLUMNS as readonly string[]).includes(column)) return String(value);
  if (column === 'estimated_revenue_usd') return Math.round(Number(value) * 100);
  return typeof value === 'boolean' ? String(value) : value;
}

export function compareSkan(expected: readonly ReportRow[], actual: readonly ReportRow[]): Difference[] {
  return compareRowSets('skan', SKAN_GROUP_COLUMNS, expected, actual, normalizeSkan);
}

/** Every row of the SKAN report, a page of 1,000 at a time; undefined when the route is not there (404). */
export const fetchSkanReport = (baseUrl: string, serverKey: string, window: ReportWindow): Promise<ReportRow[] | undefined> =>
  fetchReportRows(baseUrl, serverKey, 'skan', window);
