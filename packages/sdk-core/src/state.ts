import type { SkanState } from './skan.js';

/**
 * Everything the SDK keeps on the device, in one value written whole under one storage key, so a
 * crash between two writes cannot leave half a change (an install id without its install event,
 * an event both sent and still queued under a new id). Pure: the machine (sdk.ts) reads it once
 * at start, changes it with these functions and writes it after each change.
 */

/** An event as the service takes it (the interface's event object); `event_id` is set when tracked. */
export interface QueuedEvent {
  readonly event_id: string;
  readonly event_name: string;
  readonly install_uuid: string;
  readonly ts_ms: number;
  readonly [field: string]: unknown;
}

export interface FirstLaunchAnswer {
  readonly status: 'found' | 'not_found';
  readonly attribution: Record<string, unknown> | null;
  readonly deep_link: Record<string, string> | null;
  readonly reason?: string;
}

export interface SdkState {
  readonly version: 1;
  readonly install_uuid: string;
  /** Events tracked and not yet answered by the service, oldest first. */
  readonly queue: readonly QueuedEvent[];
  /** Bytes of the queue's events as JSON, kept with it so bounds are checked without re-serializing. */
  readonly queue_bytes: number;
  /** Events dropped by the bounds (oldest first) or refused as a batch; reported by diagnostics(). */
  readonly dropped: number;
  /** How many times the batch at the head was answered 400 as a whole. */
  readonly head_refusals: number;
  readonly session: { readonly count: number; readonly last_active_ms: number };
  /** undefined until decided; only read when the app requires consent. */
  readonly consent?: boolean;
  /** The user's consent as the service reads it (setConsent's details), kept across launches. */
  readonly consent_details?: ConsentDetails;
  /** The details changed and no event has carried them yet: the next event tracked does. */
  readonly consent_unsent?: boolean;
  readonly opted_out: boolean;
  /** The first-launch answer, once the service has given one. */
  readonly first_launch?: FirstLaunchAnswer;
  /** What the store said about the install, read at the first launch and sent with the first-launch call. */
  readonly install_signals?: InstallSignals;
  /** SKAN conversion values (skan.ts): the schema and its ETag, the window's tally, what was sent. */
  readonly skan?: SkanState;
}

/**
 * The user's consent as the app's CMP gives it: the event's `consent` object, member for member
 * (docs/sdk-protocol.md, "Consent"). The service keeps each install's latest and honours it.
 */
export interface ConsentDetails {
  /** Whether the GDPR (or the UK's, or Switzerland's) applies to this user (Google's `eea`). */
  readonly gdpr_applies?: boolean;
  /** The IAB TCF v2 consent string (IABTCF_TCString): base64url segments joined by dots, at most 4,096 characters. */
  readonly tcf_string?: string;
  /** Google's Consent Mode v2 signals. */
  readonly ad_user_data?: boolean;
  readonly ad_personalization?: boolean;
  /** Sharing with ad partners where the TCF does not apply. */
  readonly third_party_sharing?: boolean;
  /** Measurement itself: false, the service counts none of the install's later events (docs/privacy.md). */
  readonly measurement?: boolean;
}

/**
 * The state with new consent details: the next event tracked carries them, and so does the
 * install event when it still waits and is not being sent (`sending`), so that the service's
 * first word on the install already says what the user chose.
 */
export function withConsentDetails(state: SdkState, details: ConsentDetails, sending: boolean): SdkState {
  const head = state.queue[0];
  const amend = !sending && head?.event_name === 'install';
  const install = amend && { ...head, consent: details };
  return {
    ...state,
    consent_details: details,
    consent_unsent: true,
    ...(install && {
      queue: [install, ...state.queue.slice(1)],
      queue_bytes: state.queue_bytes - jsonBytes(head) + jsonBytes(install),
    }),
  };
}

/** The Google Play install referrer and its timestamps, and Apple's AdServices token, as the platform reads them. */
export interface InstallSignals {
  readonly install_referrer?: string;
  readonly referrer_click_ms?: number;
  readonly install_begin_ms?: number;
  /** `AAAttribution.attributionToken()` (docs/ios.md, section 4): sent with the install event only. */
  readonly adservices_token?: string;
}

export interface QueueBounds {
  /** Events kept at most; the oldest are dropped first. */
  readonly maxEvents: number;
  /** Bytes of JSON kept at most. */
  readonly maxBytes: number;
}

export const DEFAULT_BOUNDS: QueueBounds = { maxEvents: 5_000, maxBytes: 2 * 1024 * 1024 };

export function initialState(installUuid: string, nowMs: number): SdkState {
  return {
    version: 1,
    install_uuid: installUuid,
    queue: [],
    queue_bytes: 0,
    dropped: 0,
    head_refusals: 0,
    session: { count: 0, last_active_ms: nowMs },
    opted_out: false,
  };
}

/** UTF-8 bytes of an event as JSON, counted without an encoder (the core has no TextEncoder port). */
export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The state with `event` at the end of the queue, the oldest events dropped while over a bound. */
export function enqueued(state: SdkState, event: QueuedEvent, bounds: QueueBounds): SdkState {
  const queue = [...state.queue, event];
  let bytes = state.queue_bytes + jsonBytes(event);
  let drop = 0;
  while (queue.length - drop > bounds.maxEvents || (bytes > bounds.maxBytes && queue.length - drop > 1)) {
    bytes -= jsonBytes(queue[drop]);
    drop++;
  }
  return {
    ...state,
    queue: queue.slice(drop),
    queue_bytes: bytes,
    dropped: state.dropped + drop,
    // The head changed: refusals counted against the old head do not count against the new one.
    head_refusals: drop > 0 ? 0 : state.head_refusals,
  };
}

/** The state without the events whose ids are in `answered` (a batch the service answered). */
export function dequeued(state: SdkState, answered: ReadonlySet<string>): SdkState {
  const queue = state.queue.filter((event) => !answered.has(event.event_id));
  const removed = state.queue.filter((event) => answered.has(event.event_id));
  return {
    ...state,
    queue,
    queue_bytes: state.queue_bytes - removed.reduce((sum, event) => sum + jsonBytes(event), 0),
    head_refusals: 0,
  };
}

/** Reads a stored state, or undefined when there is none or it is not one this version wrote. */
export function parseState(text: string | undefined): SdkState | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<SdkState>;
    if (value?.version !== 1 || typeof value.install_uuid !== 'string' || !Array.isArray(value.queue)) return undefined;
    return value as SdkState;
  } catch {
    return undefined;
  }
}
