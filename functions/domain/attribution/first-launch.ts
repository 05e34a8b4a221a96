import { ServiceError } from '../common/errors';
import { isPlainObject } from '../common/json';
import { isUuid } from '../ingest/event-validation';
import type { ClickRecord } from '../links/click';
import type { DeepLink as DeepLinkData } from '../links/deep-link';
import {
  type AttributionDecision,
  type AttributionLookups,
  decideAttribution,
  type FirstLaunchEvidence,
  type InstallFacts,
  matchClick,
  ORGANIC,
  type RefusedClick,
} from './decision';

/**
 * The first-launch answer (docs/deep-links.md, "First launch"): what an app asks at its first
 * launch (POST /sdk/v1/attribution) and later (GET /sdk/v1/attribution), where the install came
 * from and which deep link to open. The click is chosen by matchClick, the aggregator's own rules
 * and windows, so the app is told what the reports will count. The first answer an install gets
 * is kept, and every later call gets the same one.
 */

/** The refusals of both routes beyond the event API's authentication and body codes. */
export const FIRST_LAUNCH_ERRORS = {
  bad_install_uuid: 400,
  bad_attribution_request: 400,
  store_unavailable: 503,
} as const;
export type FirstLaunchErrorCode = keyof typeof FIRST_LAUNCH_ERRORS;

/** The members of the body a bad_attribution_request (or bad_install_uuid) names, in the order they are checked. */
export const FIRST_LAUNCH_FIELDS = [
  'install_uuid',
  'platform',
  'app_version',
  'sdk_version',
  'install_referrer',
  'referrer_click_ms',
  'install_begin_ms',
  'language',
  'time_zone',
  'screen',
] as const;
export type FirstLaunchField = (typeof FIRST_LAUNCH_FIELDS)[number];

/** Rendered as the event API's refusals are: {"error": code, "field": member at fault}. */
export class FirstLaunchError extends ServiceError {
  declare readonly code: FirstLaunchErrorCode;

  constructor(
    code: FirstLaunchErrorCode,
    readonly field?: FirstLaunchField,
  ) {
    super(FIRST_LAUNCH_ERRORS[code], code);
    this.name = 'FirstLaunchError';
  }

  override body(): { readonly error: string; readonly field?: FirstLaunchField } {
    return this.field === undefined ? super.body() : { error: this.code, field: this.field };
  }
}

export const MAX_VERSION_CHARS = 64;
/** The event API's limit on attribution.referrer: the Play referrer is short, URL-encoded parameters. */
export const MAX_REFERRER_CHARS = 2048;
export const MAX_LANGUAGE_CHARS = 35;
export const MAX_TIME_ZONE_CHARS = 64;
/** `<width>x<height>`, each 1 to 5 digits. */
const MAX_SCREEN_CHARS = 11;

/** A first launch as the device reports it, validated. */
export interface FirstLaunchRequest {
  readonly installUuid: string;
  readonly platform: 'ios' | 'android';
  readonly appVersion: string;
  readonly sdkVersion: string;
  readonly installReferrer?: string;
  readonly referrerClickMs?: number;
  readonly installBeginMs?: number;
  readonly language?: string;
  readonly timeZone?: string;
  readonly screen?: string;
}

const VERSION = /^[\x21-\x7e]+$/;
const LANGUAGE = /^[A-Za-z0-9_-]+$/;
const TIME_ZONE = /^[A-Za-z0-9/_+-]+$/;
const SCREEN = /^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$/;

/** Optional members may be absent or null, as in an event. */
const absent = (value: unknown): value is undefined | null => value === undefined || value === null;
const textOf = (value: unknown, max: number, pattern?: RegExp): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= max && (pattern === undefined || pattern.test(value));
const isEpochMs = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * The body of POST /sdk/v1/attribution, checked member by member in FIRST_LAUNCH_FIELDS' order;
 * the first at fault is named. Unknown members are ignored, as in an event.
 */
export function parseFirstLaunch(body: unknown): FirstLaunchRequest {
  if (!isPlainObject(body)) throw new FirstLaunchError('bad_attribution_request');
  const {
    install_uuid,
    platform,
    app_version,
    sdk_version,
    install_referrer,
    referrer_click_ms,
    install_begin_ms,
    language,
    time_zone,
    screen,
  } = body;
  if (typeof install_uuid !== 'string' || !isUuid(install_uuid)) throw new FirstLaunchError('bad_install_uuid', 'install_uuid');
  if (platform !== 'ios' && platform !== 'android') throw new FirstLaunchError('bad_attribution_request', 'platform');
  if (!textOf(app_version, MAX_VERSION_CHARS, VERSION)) throw new FirstLaunchError('bad_attribution_request', 'app_version');
  if (!textOf(sdk_version, MAX_VERSION_CHARS, VERSION)) throw new FirstLaunchError('bad_attribution_request', 'sdk_version');
  const optional: [unknown, FirstLaunchField, (value: unknown) => boolean][] = [
    [install_referrer, 'install_referrer', (value) => textOf(value, MAX_REFERRER_CHARS)],
    [referrer_click_ms, 'referrer_click_ms', isEpochMs],
    [install_begin_ms, 'install_begin_ms', isEpochMs],
    [language, 'language', (value) => textOf(value, MAX_LANGUAGE_CHARS, LANGUAGE)],
    [time_zone, 'time_zone', (value) => textOf(value, MAX_TIME_ZONE_CHARS, TIME_ZONE)],
    [screen, 'screen', (value) => textOf(value, MAX_SCREEN_CHARS, SCREEN)],
  ];
  for (const [value, field, valid] of optional)
    if (!absent(value) && !valid(value)) throw new FirstLaunchError('bad_attribution_request', field);
  return {
    installUuid: install_uuid.toLowerCase(),
    platform,
    appVersion: app_version,
    sdkVersion: sdk_version,
    ...(absent(install_referrer) ? {} : { installReferrer: install_referrer as string }),
    ...(absent(referrer_click_ms) ? {} : { referrerClickMs: referrer_click_ms as number }),
    ...(absent(install_begin_ms) ? {} : { installBeginMs: install_begin_ms as number }),
    ...(absent(language) ? {} : { language: language as string }),
    ...(absent(time_zone) ? {} : { timeZone: time_zone as string }),
    ...(absent(screen) ? {} : { screen: screen as string }),
  };
}

/** The install_uuid of GET /sdk/v1/attribution's query, lower-cased. */
export function parseInstallQuery(installUuid: string | undefined): string {
  if (installUuid === undefined || !isUuid(installUuid)) throw new FirstLaunchError('bad_install_uuid', 'install_uuid');
  return installUuid.toLowerCase();
}

// ---- The answer ------------------------------------------------------------------------------

/**
 * Why an answer is not_found: the click the referrer named and why it was refused
 * (RefusedClick), none named with probabilistic matching off, none in the probabilistic window,
 * the aggregator counted the install organic, or nothing is known of the install (GET only).
 */
export type NotFoundReason = `click_${RefusedClick}` | 'no_click_named' | 'no_click_in_window' | 'organic' | 'unknown_install';

export interface AnswerAttribution {
  partner: string;
  campaign: string | null;
  link_id: string | null;
  click_id: string | null;
  sub1: string | null;
  sub2: string | null;
  sub3: string | null;
  sub4: string | null;
  sub5: string | null;
  match: 'deterministic' | 'probabilistic';
  click_ms: number | null;
}

export type AnswerDeepLink = { [K in keyof Required<DeepLinkData>]: string | null };

export interface FirstLaunchAnswer {
  status: 'found' | 'not_found';
  reason?: NotFoundReason;
  attribution: AnswerAttribution | null;
  deep_link: AnswerDeepLink | null;
}

/**
 * The first answer an install got, kept in the installs table beside what the aggregator keeps
 * of it (pk `<app_id>#<install_uuid>`, sk `first_launch`): a privacy deletion of the install takes
 * it with the rest of the partition.
 */
export interface FirstLaunchRecord {
  readonly app_id: string;
  readonly install_uuid: string;
  readonly answered_ms: number;
  readonly platform: 'ios' | 'android';
  readonly answer: FirstLaunchAnswer;
  /**
   * `install_event` when the aggregator kept it, having counted the install before any first
   * launch asked (installDecision): the answer is then its decision, and answered_ms the install's time.
   */
  readonly kept_by?: 'install_event';
}

export interface FirstLaunchStore {
  /** The install's kept first answer, if any. */
  first(appId: string, installUuid: string): Promise<FirstLaunchRecord | undefined>;
  /** Keeps the record unless the install has one already; gives back the one kept (a race's winner). */
  keep(record: FirstLaunchRecord): Promise<FirstLaunchRecord>;
  /** The aggregator's decision of the install event it counts the install by (its head), once counted. */
  counted(appId: string, installUuid: string): Promise<AttributionDecision | undefined>;
}

export interface FirstLaunchPorts {
  readonly clicks: Pick<AttributionLookups, 'clickById' | 'latestClick'>;
  readonly answers: FirstLaunchStore;
}

/** An authenticated first launch: the app's id and switch, the request's own address, the time it arrived. */
export interface FirstLaunchCall {
  readonly appId: string;
  readonly probabilistic: boolean;
  readonly clientIp: string;
  readonly receivedMs: number;
  readonly request: FirstLaunchRequest;
}

/**
 * POST /sdk/v1/attribution after authentication: the kept answer when the install has one; else
 * the click matchClick takes for an install at this moment from this address (the referrer's
 * click_id, deterministic; else, when the app switched it on, the latest click of the address
 * and platform in the 24 hours before), kept by a conditional write so that two calls racing
 * still give the same answer.
 */
export async function answerFirstLaunch(ports: FirstLaunchPorts, call: FirstLaunchCall): Promise<FirstLaunchAnswer> {
  const { request } = call;
  // Side by side: a first call waits for one read less (the budget is the SDK's first screen); a
  // repeat wastes a click read or two, and repeats are rare.
  const [kept, { matched, refused }] = await Promise.all([
    ports.answers.first(call.appId, request.installUuid),
    matchClick(
      {
        appId: call.appId,
        tsMs: call.receivedMs,
        platform: request.platform,
        clientIp: call.clientIp,
        probabilistic: call.probabilistic,
        attribution: request.installReferrer === undefined ? undefined : { referrer: request.installReferrer },
      },
      ports.clicks,
    ),
  ]);
  if (kept) return kept.answer;
  const answer: FirstLaunchAnswer = matched
    ? found(clickAttribution(matched.click, matched.type), matched.click)
    : notFound(refused ? `click_${refused.reason}` : call.probabilistic ? 'no_click_in_window' : 'no_click_named');
  const record = await ports.answers.keep({
    app_id: call.appId,
    install_uuid: request.installUuid,
    answered_ms: call.receivedMs,
    platform: request.platform,
    answer,
  });
  return record.answer;
}

/**
 * GET /sdk/v1/attribution: what the aggregator decided for the install once it counted it (the
 * deep link of its click while the click is kept); else the first answer the install got; else
 * not_found, unknown_install.
 */
export async function currentAttribution(ports: FirstLaunchPorts, appId: string, installUuid: string): Promise<FirstLaunchAnswer> {
  const [decision, kept] = await Promise.all([ports.answers.counted(appId, installUuid), ports.answers.first(appId, installUuid)]);
  if (!decision) return kept?.answer ?? notFound('unknown_install');
  return decisionAnswer(appId, decision, ports.clicks, kept?.answer);
}

/** The install's first-launch record as a read of its partition found it; `firstLaunch` absent: it had none. */
export interface KnownFirstLaunch {
  readonly firstLaunch: FirstLaunchRecord | undefined;
}

/**
 * The aggregator's decision of an install event, with the install's first-launch answer as evidence
 * (docs/deep-links.md, "The answer and the reports"): for the first install of an install_uuid, the
 * answer the app was told decides unless the install event carries a stronger signal (decideAttribution
 * says which). An install counted before any first launch asked keeps its decision as the answer, by
 * the same conditional put, so a first launch asking after (or racing with) the count is told the
 * reports' attribution; when the put finds that a first launch answered meanwhile, the install is
 * decided again with that answer. The rebuild passes no `keep`: it reads, never writes.
 */
export async function installDecision(
  facts: InstallFacts,
  lookups: AttributionLookups,
  answers: Pick<FirstLaunchStore, 'first'> & Partial<Pick<FirstLaunchStore, 'keep'>>,
  known?: KnownFirstLaunch,
): Promise<AttributionDecision> {
  // A reinstall's install event is not what the first launch was asked about.
  if (facts.seenInstallUuid) return decideAttribution(facts, lookups);
  // The aggregator's read of the install's partition already holds the record (or shows none): a
  // first launch that answered after that read is found by the keep below, as one racing with the read.
  const kept = known ? known.firstLaunch : await answers.first(facts.appId, facts.installUuid);
  if (kept && kept.kept_by === undefined) return decideAttribution({ ...facts, firstLaunch: evidenceOf(kept) }, lookups);
  const decision = await decideAttribution(facts, lookups);
  if (kept || !answers.keep || (facts.platform !== 'ios' && facts.platform !== 'android')) return decision;
  const record = await answers.keep({
    app_id: facts.appId,
    install_uuid: facts.installUuid,
    answered_ms: facts.tsMs,
    platform: facts.platform,
    answer: await decisionAnswer(facts.appId, decision, lookups),
    kept_by: 'install_event',
  });
  return record.kept_by === undefined ? decideAttribution({ ...facts, firstLaunch: evidenceOf(record) }, lookups) : decision;
}

/** A kept answer as the decision reads it. */
export function evidenceOf(record: FirstLaunchRecord): FirstLaunchEvidence {
  const { attribution } = record.answer;
  return {
    answeredMs: record.answered_ms,
    status: record.answer.status,
    clickId: attribution?.click_id ?? null,
    match: attribution?.match ?? null,
    clickMs: attribution?.click_ms ?? null,
  };
}

/**
 * A decision said as a first-launch answer, with the deep link of the decision's click: the GET's
 * answer. An earlier answer that named the same click already holds its deep link, so the click
 * is not read again.
 */
async function decisionAnswer(
  appId: string,
  decision: AttributionDecision,
  lookups: Pick<AttributionLookups, 'clickById'>,
  earlier?: FirstLaunchAnswer,
): Promise<FirstLaunchAnswer> {
  if (decision.partner === ORGANIC || decision.attribution_type === 'organic') return notFound('organic');
  const attribution = decisionAttribution(decision);
  if (!decision.click_id) return found(attribution, undefined);
  if (earlier?.attribution?.click_id === decision.click_id) return { ...found(attribution, undefined), deep_link: earlier.deep_link };
  return found(attribution, await lookups.clickById(appId, decision.click_id));
}

const notFound = (reason: NotFoundReason): FirstLaunchAnswer => ({ status: 'not_found', reason, attribution: null, deep_link: null });

function found(attribution: AnswerAttribution, click: ClickRecord | undefined): FirstLaunchAnswer {
  return { status: 'found', attribution, deep_link: deepLinkOf(click?.deep_link) };
}

const DEEP_LINK_KEYS = ['value', 'sub1', 'sub2', 'sub3', 'sub4', 'sub5', 'sub6', 'sub7', 'sub8', 'sub9', 'sub10'] as const;

/** Every member present, null when the click has none; no deep link at all is null. */
export function deepLinkOf(data: DeepLinkData | undefined): AnswerDeepLink | null {
  if (!data || !DEEP_LINK_KEYS.some((key) => typeof data[key] === 'string')) return null;
  return Object.fromEntries(DEEP_LINK_KEYS.map((key) => [key, typeof data[key] === 'string' ? data[key] : null])) as AnswerDeepLink;
}

type ClickSide = Partial<Pick<ClickRecord, 'campaign' | 'link_id' | 'click_id' | 'sub1' | 'sub2' | 'sub3' | 'sub4' | 'sub5'>>;

function attributionOf(
  partner: string,
  side: ClickSide,
  match: AnswerAttribution['match'],
  clickMs: number | undefined,
): AnswerAttribution {
  return {
    partner,
    campaign: side.campaign ?? null,
    link_id: side.link_id ?? null,
    click_id: side.click_id ?? null,
    sub1: side.sub1 ?? null,
    sub2: side.sub2 ?? null,
    sub3: side.sub3 ?? null,
    sub4: side.sub4 ?? null,
    sub5: side.sub5 ?? null,
    match,
    click_ms: clickMs ?? null,
  };
}

const clickAttribution = (click: ClickRecord, match: AnswerAttribution['match']) => attributionOf(click.partner, click, match, click.ts_ms);

/** A counted decision: deterministic or probabilistic (Apple Ads' claim is deterministic, without a link or click). */
const decisionAttribution = (decision: AttributionDecision) =>
  attributionOf(
    decision.partner,
    decision,
    decision.attribution_type === 'probabilistic' ? 'probabilistic' : 'deterministic',
    decision.click_ms,
  );
