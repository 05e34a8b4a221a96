import type { Member } from './members';

/**
 * The change log (docs/console.md, "The change log"): one record per console command that changed
 * something, with who ran it, what, when, and the state before and after as the command's own
 * reads and answer give it. Not the ingest audit objects of functions/domain/audit/, which record
 * events as received: this one records what people did to the configuration.
 */
export interface ChangeRecord {
  /** The company the change was made in; `_deployment` for a command with no company (fx set). */
  readonly companyId: string;
  readonly atMs: number;
  readonly who: { readonly sub: string; readonly email: string; readonly role: string };
  /** The command, as the registry names it (`link update`). */
  readonly command: string;
  /** The flags as sent, with secrets and file bodies left out (redactFlags). */
  readonly flags: Readonly<Record<string, unknown>>;
  /** What the target was before the change, when the command has a read for it; null for a creation. */
  readonly before: unknown;
  /** The command's answer, with secrets left out. */
  readonly after: unknown;
}

/** Where change records are kept (functions/adapters/change-log-store.ts). */
export interface ChangeLog {
  append(record: ChangeRecord): Promise<void>;
  /** A company's records, newest first, at most `limit`. */
  recent(companyId: string, limit: number): Promise<ChangeRecord[]>;
}

export const DEPLOYMENT_SCOPE = '_deployment';

/** The maximum length kept of one record's before/after texts: a change record is a summary, not a copy. */
const MAX_STATE_CHARS = 4_000;

/** Answer fields that are credentials: they are shown once to the caller and never written to the log. */
const SECRET_FIELDS = new Set(['server_key', 'signing_secret', 'secret', 'previous_signing_secret']);

/** Flags whose values are secrets or bulky file bodies (a cost CSV, a SKAN schema): the log notes their size. */
const BULKY_FLAGS = new Set(['csv', 'json', 'server-key', 'file']);

export function redactFlags(flags: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(flags).map(([flag, value]) =>
      BULKY_FLAGS.has(flag) && typeof value === 'string' ? [flag, `(${value.length} characters)`] : [flag, value],
    ),
  );
}

/** A state for the log: secrets replaced by "(secret)", and cut to a bounded text when it is large. */
export function loggedState(state: unknown): unknown {
  if (state === undefined || state === null) return null;
  const text = JSON.stringify(state, (key, value: unknown) => (SECRET_FIELDS.has(key) && typeof value === 'string' ? '(secret)' : value));
  if (text.length <= MAX_STATE_CHARS) return JSON.parse(text) as unknown;
  return { truncated: true, text: text.slice(0, MAX_STATE_CHARS) };
}

export function changeRecord(
  member: Member,
  change: { companyId: string | undefined; command: string; flags: Readonly<Record<string, unknown>>; before: unknown; after: unknown },
  atMs: number,
): ChangeRecord {
  return {
    companyId: change.companyId ?? DEPLOYMENT_SCOPE,
    atMs,
    who: { sub: member.sub, email: member.email, role: member.kind === 'operator' ? 'operator' : member.role },
    command: change.command,
    flags: redactFlags(change.flags),
    before: loggedState(change.before),
    after: loggedState(change.after),
  };
}
