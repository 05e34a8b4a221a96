/**
 * What went wrong, in a marketer's words: the admin CLI's refusals (`--lookback-days must be at
 * most 30`) with the form's own field label, and the Reporting API's codes (`window_too_large`)
 * as sentences that say what to do. DOM-free, so the unit tests run it in node.
 */

/** The Reporting API's (and the performance and raw-data reads') error codes, as sentences. */
export const CODE_SENTENCES: Readonly<Record<string, string>> = {
  window_too_large: 'The period is longer than 365 days: choose a shorter one.',
  invalid_since_until: 'The period is not a valid pair of dates: choose it again.',
  invalid_window: 'The period is not a valid pair of dates: choose it again.',
  since_ms_must_be_less_than_until_ms: 'The period ends before it starts: choose the first day before the last.',
  invalid_limit: 'The page size must be a whole number from 1 to 1,000.',
  invalid_offset: 'The page position must be a whole number of rows, 0 or more.',
  invalid_cursor: 'The page position is not one this report gave: start again from the first page.',
  invalid_group_by: 'The grouping is not one the report knows: group by partner, campaign, country, platform or day, each once.',
  invalid_filter: 'A filter is empty: give each filter at least one value, or remove it.',
  unknown_report: 'This report does not exist.',
  method_not_allowed: 'The request was refused: reload the page and try again.',
  insufficient_scope: 'The server key may not read reports (it is a cost-only key).',
  missing_bearer_token: 'The request had no server key.',
  invalid_or_revoked_key: 'The server key is unknown or revoked.',
  report_unavailable: 'The reports could not be read just now: try again in a moment.',
  store_unavailable: 'The reports could not be read just now (the data store did not answer): try again in a moment.',
  'app not found': 'This app no longer exists: choose another one in the header.',
  'company not found': 'This company no longer exists: choose another one in the header.',
  'link not found': 'This tracking link no longer exists.',
  'install not found': 'No install with this id was found for the app.',
  'internal error': 'Something went wrong in the console: see the terminal running npm run console.',
  // The console API with sign-in (docs/console.md, "The console API").
  role_not_allowed: 'Your role does not allow this: ask an admin of your company.',
  company_scope: 'This belongs to another company, or does not exist.',
  not_a_member: 'Your account has no role in a company yet: ask an admin to invite you again.',
  unauthenticated: 'Your sign-in has expired: sign in again.',
};

/** What the header's banner says while the local runtime is stopped. */
export const RUNTIME_DOWN = 'The runtime is not running: start it with npm start';
/** ... and while the console's own server is gone. */
export const CONSOLE_DOWN = 'The console server is not running: start it with npm run console, then reload this page';

/** `lookback-days` as a label: "Lookback days". */
export const flagLabel = (flag: string): string => {
  const words = flag.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** The refusal of a flag (`--lookback-days must be ...`): the flag and what follows it. */
const FLAG_REFUSAL = /^--([a-z0-9][a-z0-9-]*)\s+(.+)$/is;
/** `link create takes no --foo flag`. */
const UNKNOWN_FLAG = /takes no --([a-z0-9-]+) flag$/i;

export interface PlainErrorSource {
  readonly message: string;
  /** The flag at fault, as the console server names it. */
  readonly flag?: string;
  /** Set when nothing answered: the local runtime (the console server's 502) or the console server itself. */
  readonly unreachable?: 'runtime' | 'console';
}

/**
 * The error in plain words. `labels` maps a form's flags to its field labels (`{"lookback-days":
 * "Lookback (days)"}`); a flag without one is written as words ("Lookback days"). Anything else
 * keeps its message, with `--flag` mentions turned into words and a leading capital.
 */
export function plainError(error: PlainErrorSource | string | unknown, labels: Readonly<Record<string, string>> = {}): string {
  const message =
    typeof error === 'string'
      ? error
      : error && typeof (error as PlainErrorSource).message === 'string'
        ? (error as PlainErrorSource).message
        : String(error);
  const text = message.trim();
  const unreachable = typeof error === 'object' && error !== null ? (error as PlainErrorSource).unreachable : undefined;
  if (unreachable === 'console') return CONSOLE_DOWN;
  // The local runtime's look-up says "no local runtime is running for DATA_DIR=...": the short form; a stack's keeps its words.
  if (unreachable === 'runtime' && /no local runtime is running/i.test(text)) return RUNTIME_DOWN;
  const known = CODE_SENTENCES[text];
  if (known) return known;
  const label = (flag: string) => labels[flag] ?? flagLabel(flag);
  const refusal = FLAG_REFUSAL.exec(text);
  if (refusal?.[1] && refusal[2]) return sentence(`${label(refusal[1])} ${refusal[2]}`);
  const unknown = UNKNOWN_FLAG.exec(text);
  if (unknown?.[1]) return sentence(`The form sent a field the command does not take (${label(unknown[1])})`);
  if (/ECONNREFUSED|ECONNRESET|fetch failed/i.test(text)) return RUNTIME_DOWN;
  // A code without a sentence yet (`some_new_code`): at least its words.
  if (/^[a-z]+(_[a-z0-9]+)+$/.test(text)) return `${sentence(text.replace(/_/g, ' '))}.`;
  return sentence(text.replace(/--([a-z0-9][a-z0-9-]*)/gi, (_, flag: string) => label(flag).toLowerCase()));
}

/** A leading capital; no trailing full stop added to a message that ends with its own punctuation. */
function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
