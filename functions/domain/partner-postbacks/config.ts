import { checkTemplate, TemplateError } from './template';

/**
 * A partner's postback configuration for one app (`admin postback set`): where to send, which
 * events, for how long after the install, and whether fraud-flagged installs are sent.
 */
export interface PostbackConfig {
  readonly app_id: string;
  readonly partner: string;
  /** The URL template (template.ts); checked when it is set. */
  readonly url: string;
  /** Event names that send a postback ("install" for the install itself), or '*' for every event. */
  readonly events: readonly string[] | '*';
  /** An in-app event sends a postback when it happens at most this many days after its install. */
  readonly event_window_days: number;
  readonly method: 'GET' | 'POST';
  /**
   * Fraud-flagged installs (docs/aggregation.md#attribution) and their events are withheld unless this is set,
   * as AppsFlyer withholds blocked installs; when set they are sent with {fraud_reasons} filled.
   */
  readonly send_fraud: boolean;
  /**
   * The partner's vendor id in the IAB's Global Vendor List: where the GDPR applies and the user's
   * consent is a TC string, a postback is sent only with that vendor's consent (docs/privacy.md,
   * "Consent"); without an id, none is sent for such users.
   */
  readonly tcf_vendor_id?: number;
  readonly updated_ms: number;
}

export const DEFAULT_EVENTS = ['install'] as const;
export const DEFAULT_EVENT_WINDOW_DAYS = 7;
export const MAX_EVENT_WINDOW_DAYS = 90;
const EVENT_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

export class PostbackConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostbackConfigError';
  }
}

export interface PostbackConfigInput {
  readonly partner: string;
  readonly url: string;
  /** Comma-separated names or '*'. */
  readonly events?: string;
  readonly eventWindowDays?: number;
  readonly method?: string;
  readonly sendFraud?: boolean;
  readonly tcfVendorId?: number;
}

/** TCF vendor ids are 16-bit in a TC string. */
export const MAX_TCF_VENDOR_ID = 65_535;

/** Validates what `postback set` was given; the destination itself is checked by destination.ts. */
export function postbackConfig(appId: string, input: PostbackConfigInput, nowMs: number): PostbackConfig {
  const partner = input.partner.trim();
  if (!partner || partner.length > 100) throw new PostbackConfigError('a partner name is 1 to 100 characters');
  try {
    checkTemplate(input.url);
  } catch (error) {
    if (error instanceof TemplateError) throw new PostbackConfigError(`--url: ${error.message}`);
    throw error;
  }
  const events = parseEvents(input.events);
  const window = input.eventWindowDays ?? DEFAULT_EVENT_WINDOW_DAYS;
  if (!Number.isInteger(window) || window < 0 || window > MAX_EVENT_WINDOW_DAYS) {
    throw new PostbackConfigError(`--event-window-days is a whole number of days, 0 to ${MAX_EVENT_WINDOW_DAYS}`);
  }
  const vendorId = input.tcfVendorId;
  if (vendorId !== undefined && !(Number.isInteger(vendorId) && vendorId >= 1 && vendorId <= MAX_TCF_VENDOR_ID)) {
    throw new PostbackConfigError(`--tcf-vendor-id is the partner's IAB Global Vendor List id, 1 to ${MAX_TCF_VENDOR_ID}`);
  }
  const method = (input.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'POST') throw new PostbackConfigError('--method is GET or POST');
  return {
    app_id: appId,
    partner,
    url: input.url,
    events,
    event_window_days: window,
    method,
    send_fraud: input.sendFraud ?? false,
    ...(vendorId !== undefined ? { tcf_vendor_id: vendorId } : {}),
    updated_ms: nowMs,
  };
}

function parseEvents(events: string | undefined): PostbackConfig['events'] {
  if (events === undefined) return [...DEFAULT_EVENTS];
  if (events.trim() === '*') return '*';
  const names = [
    ...new Set(
      events
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0) throw new PostbackConfigError('--events lists event names (install, purchase, ...) or is *');
  const bad = names.find((name) => !EVENT_NAME.test(name));
  if (bad !== undefined) throw new PostbackConfigError(`--events: "${bad}" is not an event name`);
  return names;
}

/** Whether the configuration asks for a postback of this event ("install" for the install). */
export const wantsEvent = (config: PostbackConfig, eventName: string): boolean =>
  config.events === '*' || config.events.includes(eventName);
