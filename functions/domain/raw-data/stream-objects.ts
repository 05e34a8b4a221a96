import { gunzipSync, gzipSync } from 'node:zlib';
import type { AttributionDecision } from '../attribution/decision';
import type { Platform } from '../links/platform';
// Only its type: the TC string's library stays out of the stream's and the export's bundles.
import type { ConsentRecord } from '../privacy/consent';

/**
 * The event stream's objects (docs/raw-data.md, "Storage"): one gzip JSON Lines object per
 * aggregator apply and app, `stream/<app_id>/<opened_ms:13>-<lane:2>-<seq:10>.jsonl.gz`, holding
 * the events that apply counted for the app. The aggregator writes them (functions/domain/
 * aggregation/aggregate.ts), the stream endpoint and the export read them, the privacy drain
 * rewrites them.
 */

/** What GET /api/v1/stream/events serves of an event's install: its attribution decision. */
export interface StreamAttribution {
  readonly partner: string;
  readonly campaign: string | null;
  readonly attribution_type: string;
  readonly link_id: string | null;
  readonly ext_click_id: string | null;
  readonly sub1: string | null;
  readonly sub2: string | null;
  readonly sub3: string | null;
  readonly sub4: string | null;
  readonly sub5: string | null;
  readonly is_reinstall: boolean;
  readonly fraud_reasons: readonly string[];
  readonly install_corrected_ts: number;
  /** The install event the event counts against (which install of the uuid, after a reinstall). */
  readonly install_event_id: string;
}

/** An event as the stream serves it: no device id, no IP, nothing of the signature. */
export interface StreamEvent {
  readonly event_id: string;
  readonly event_name: string;
  readonly install_uuid: string;
  readonly ts_ms: number;
  readonly corrected_ts: number;
  readonly received_ms: number;
  readonly revenue_usd: number | null;
  readonly platform: Platform | null;
  readonly properties: Record<string, unknown> | null;
  readonly country: string | null;
  /** Null for an event counted before any install of its install_uuid (applied later to the first one). */
  readonly attribution: StreamAttribution | null;
  /** An ad_revenue event's impression as sent (docs/ingestion.md, "Ad revenue"); absent on every other event. */
  readonly ad_revenue?: Record<string, unknown>;
  /** A refund event's refund as sent (docs/ingestion.md, "Refunds"); absent on every other event. */
  readonly refund?: Record<string, unknown>;
  /** The store transaction id a purchase carried, which a refund may name; absent when it carried none. */
  readonly transaction_id?: string;
  /**
   * The install's latest consent the service knew when it counted the event (docs/privacy.md,
   * "Consent"): null when none was known. Absent on lines written before consent was streamed.
   */
  readonly consent?: StreamConsent | null;
}

/** An install's consent as the stream and the export show it: each signal null when the app did not say it. */
export interface StreamConsent {
  readonly gdpr_applies: boolean | null;
  readonly tcf_string: string | null;
  readonly ad_user_data: boolean | null;
  readonly ad_personalization: boolean | null;
  readonly third_party_sharing: boolean | null;
  readonly measurement: boolean | null;
  /** Corrected time of the event that said it: of two lines of an install, the later consent has the larger. */
  readonly ts_ms: number;
  /** The event that said it. */
  readonly event_id: string;
}

const flag = (value: unknown): boolean | null => (typeof value === 'boolean' ? value : null);

/** A consent record as the stream shows it, members taken by name; null for none. */
export function streamConsent(latest: ConsentRecord | undefined): StreamConsent | null {
  if (!latest) return null;
  return {
    gdpr_applies: flag(latest.gdpr_applies),
    tcf_string: typeof latest.tcf_string === 'string' ? latest.tcf_string : null,
    ad_user_data: flag(latest.ad_user_data),
    ad_personalization: flag(latest.ad_personalization),
    third_party_sharing: flag(latest.third_party_sharing),
    measurement: flag(latest.measurement),
    ts_ms: latest.ts_ms,
    event_id: latest.event_id,
  };
}

/** The members of an impression the stream and the export carry (validateEvent checked each); no other member an SDK sent. */
export const IMPRESSION_MEMBERS = [
  'source',
  'network',
  'format',
  'placement',
  'ad_unit',
  'revenue',
  'currency',
  'precision',
  'impression_id',
];

/** The members of a refund the stream and the export carry (validateEvent checked each); no other member an SDK sent. */
export const REFUND_MEMBERS = ['purchase_event_id', 'transaction_id', 'revenue', 'currency'];

/** On the line of an install event the apply counted: the whole decision, for the installs export. */
export interface StreamInstall {
  /** No install of the uuid was counted before it: events held for the uuid are applied to it. */
  readonly first: boolean;
  readonly previous_install_event_id: string | null;
  readonly decision: AttributionDecision;
}

export interface StreamLine {
  /** Owner token of the audit object the event came from: a replay keeps the lines of the objects its apply included. */
  readonly o: string;
  readonly event: StreamEvent;
  readonly install?: StreamInstall;
}

export const STREAM_PREFIX = 'stream/';
const SUFFIX = '.jsonl.gz';

/** The prefix of an app's stream objects. */
export const streamAppPrefix = (appId: string): string => `${STREAM_PREFIX}${appId}/`;

/** The name of an apply's stream object of one app: sorts by the time the apply opened, then lane and number. */
export function streamKey(appId: string, apply: { readonly openedMs: number; readonly lane: number; readonly seq: number }): string {
  return `${streamAppPrefix(appId)}${streamName(apply)}`;
}

/** The part of a stream key after the app's prefix. */
export function streamName(apply: { readonly openedMs: number; readonly lane: number; readonly seq: number }): string {
  const opened = String(apply.openedMs).padStart(13, '0');
  return `${opened}-${String(apply.lane).padStart(2, '0')}-${String(apply.seq).padStart(10, '0')}${SUFFIX}`;
}

/** The apply a stream object name (after the app prefix) stands for; undefined when it is not one. */
export function applyOfStreamName(name: string): { openedMs: number; lane: number; seq: number } | undefined {
  const match = /^(\d{13})-(\d{2})-(\d{10})\.jsonl\.gz$/.exec(name);
  if (!match) return undefined;
  return { openedMs: Number(match[1]), lane: Number(match[2]), seq: Number(match[3]) };
}

/**
 * How long after an apply's opening time its lane may still not show it open to a reader: the
 * aggregator gives an apply up (and retries its objects) when taking the lane took longer, so that
 * a reader's watermark (now minus the settle time, functions/domain/raw-data/watermark.ts) never
 * passes an apply that is about to open. Well under half the settle time, for the clocks of hosts.
 */
export const STREAM_OPEN_SLACK_MS = 4_000;

export function encodeStreamLines(lines: readonly StreamLine[]): Uint8Array {
  return gzipSync(lines.map((line) => JSON.stringify(line)).join('\n'));
}

export function decodeStreamLines(bytes: Uint8Array): StreamLine[] {
  const text = gunzipSync(bytes).toString('utf8');
  return text === '' ? [] : text.split('\n').map((line) => JSON.parse(line) as StreamLine);
}

/** Stream objects by key: the aggregator's writes and a replay's rewrites. */
export interface StreamObjects {
  /** The object's lines; undefined when there is none. */
  get(key: string): Promise<StreamLine[] | undefined>;
  put(key: string, lines: readonly StreamLine[]): Promise<void>;
  delete(key: string): Promise<void>;
}

/**
 * Keeps only the lines of the objects an apply included: rewritten when some are left out,
 * deleted when none is left. A replay and an apply that met a concurrent delivery call it.
 */
export async function keepIncluded(store: StreamObjects, key: string, included: ReadonlySet<string>): Promise<void> {
  const lines = await store.get(key);
  if (lines === undefined) return;
  const kept = lines.filter((line) => included.has(line.o));
  if (kept.length === lines.length) return;
  if (kept.length === 0) await store.delete(key);
  else await store.put(key, kept);
}

/** The stream's attribution of a decision, for an install counted at `installTs` with event `installEventId`. */
export function streamAttribution(decision: AttributionDecision, installTs: number, installEventId: string): StreamAttribution {
  return {
    partner: decision.partner,
    campaign: decision.campaign ?? null,
    attribution_type: decision.attribution_type,
    link_id: decision.link_id ?? null,
    ext_click_id: decision.ext_click_id ?? null,
    sub1: decision.sub1 ?? null,
    sub2: decision.sub2 ?? null,
    sub3: decision.sub3 ?? null,
    sub4: decision.sub4 ?? null,
    sub5: decision.sub5 ?? null,
    is_reinstall: decision.reinstall,
    fraud_reasons: [...decision.fraud_reasons],
    install_corrected_ts: installTs,
    install_event_id: installEventId,
  };
}
