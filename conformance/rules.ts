/**
 * The rules of docs/sdk-protocol.md the kit checks on an SDK's real traffic, by id, with their
 * level there: a MUST broken fails the scenario, a SHOULD broken is reported as a warning.
 * test/unit/conformance/rules.test.ts holds these to the document.
 */
export const SHOULD_RULES: ReadonlySet<string> = new Set(['P-GZIP-1', 'P-SEND-1']);

export const CHECKED_RULES = {
  'P-HDR-1': 'every signed request carries the company key, app key, signature and SDK headers of its app',
  'P-SIGN-1': 'the signature is the HMAC-SHA256 of the body bytes as sent (compressed when gzipped)',
  'P-BATCH-1': 'a batch holds 1 to 1,000 events, in the documented JSON shape',
  'P-GZIP-1': 'a batch of 10 events or more is sent gzipped',
  'P-ID-1': 'an event keeps its event_id across every retry and restart',
  'P-STAMP-1': 'sent_at_ms is stamped anew for each attempt',
  'P-SEND-1': 'one event request in flight at a time',
  'P-BACKOFF-1': 'a failed attempt is retried after a wait, not in a loop',
  'P-BACKOFF-2': 'a Retry-After answer is honoured: nothing is sent again before it ends',
  'P-AUTH-1': 'after a 401 the SDK stops sending events',
  'P-FIRST-1': 'an app install makes its first-launch call at its first start, no later than its first batch',
  'P-CONSENT-1': 'nothing is sent before consent when the app requires it',
  'P-ONCE-1': 'every tracked event is counted exactly once, across failures and restarts',
  'P-PRIV-1': 'no IP address and no advertising identifier without consent in any event',
} as const;

export type RuleId = keyof typeof CHECKED_RULES;
