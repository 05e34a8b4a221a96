import { ServiceError } from '../domain/common/errors';
import { type Member, type Role, reaches } from '../domain/team/members';

/**
 * Who may run each admin command from the deployed console (docs/console.md, "Roles"), in one
 * place beside the console's registry (registry.ts): the console API checks it on every command
 * (console-call.ts), whatever the page shows. The CLI is not checked: it runs with the
 * operator's AWS credentials, an operator's power.
 *
 * - viewer: reports only (and the lists the header needs to pick a company and an app);
 * - marketer: a viewer's, and links and cost;
 * - admin: a marketer's, and apps, keys, postbacks, SKAN settings, raw data and users;
 * - operator: everything, every company (the commands that span companies or the deployment are
 *   theirs alone, the health view among them).
 */
export interface CommandAccess {
  readonly role: Role;
  /** A command that changes something: the console API writes a change record for it. */
  readonly changes: boolean;
  /**
   * The read whose answer is the change record's "before" (a command of the registry, with the
   * same scope flag); without it, the record the command targets as the scope check read it.
   */
  readonly before?: string;
}

const read = (role: Role): CommandAccess => ({ role, changes: false });
const change = (role: Role, before?: string): CommandAccess => ({ role, changes: true, ...(before ? { before } : {}) });

export const COMMAND_ROLES: Readonly<Record<string, CommandAccess>> = {
  'company create': change('operator'),
  // A member's answer holds their own company alone (console-api.ts, scopedAnswer).
  'company list': read('viewer'),
  'company suspend': change('operator'),
  'company resume': change('operator'),
  'app create': change('admin'),
  'app update': change('admin', 'app show'),
  'app list': read('viewer'),
  // It shows the app's signing secret.
  'app show': read('admin'),
  'app rotate-signing-secret': change('admin'),
  'server-key create': change('admin'),
  'server-key list': read('admin'),
  'server-key revoke': change('admin'),
  'signing-secrets migrate': change('operator'),
  'link create': change('marketer'),
  'link update': change('marketer'),
  'link disable': change('marketer'),
  'link enable': change('marketer'),
  'link stats': read('viewer'),
  'link list': read('viewer'),
  'link try': read('marketer'),
  'report show': read('viewer'),
  'report pages': read('viewer'),
  // An install's decision names its device hash and IP: personal data, for admins.
  'install show': read('admin'),
  'privacy show': read('admin'),
  'postback set': change('admin', 'postback list'),
  'postback list': read('admin'),
  'postback delete': change('admin', 'postback list'),
  'postback log': read('admin'),
  // Withheld for consent: counts and the newest, each naming its install (as postback log does).
  'postback withheld': read('admin'),
  'cost import': change('marketer'),
  'fx set': change('operator'),
  'fx show': read('viewer'),
  'skan schema set': change('admin', 'skan schema show'),
  'skan schema show': read('viewer'),
  'skan network set': change('admin', 'skan network show'),
  'skan network show': read('viewer'),
  'user invite': change('admin'),
  'user remove': change('admin'),
  'user list': read('admin'),
  'audit log': read('admin'),
  // The deployment's health view (docs/console.md, "Health"): service-wide figures that name no
  // company, app or install, but sum every company's (events per hour, postback failures by
  // partner): one company's admin would read the others' volumes, so operators alone.
  health: read('operator'),
  // Its verdict and problems alone: parts of the service, no company's name or volumes.
  status: read('viewer'),
};

/**
 * Commands that name no company and answer nothing of one by name (`health` answers the
 * deployment's sums): a member may run them without a scope flag. Every other command a member
 * runs must name its company through a scope flag.
 */
const UNSCOPED = new Set(['company list', 'fx show', 'health', 'status']);

/** The flags that name what a command acts on, in the order they are looked at. */
export const SCOPE_FLAGS = ['company-key', 'app-key', 'link-id', 'server-key', 'key-id'] as const;
export type ScopeFlag = (typeof SCOPE_FLAGS)[number];

/** What a scope flag's value belongs to, and that thing as stored (the "before" of a change without its own read). */
export interface ScopedTarget {
  readonly companyId: string;
  readonly record: unknown;
}

/** Looks up the company of a scope flag's value (command-scope.ts reads the tenants and links tables). */
export type TargetLookup = (flag: ScopeFlag, value: string) => Promise<ScopedTarget | undefined>;

/** 403 role_not_allowed: the member's role is below the command's. */
export class RoleNotAllowedError extends ServiceError {
  constructor() {
    super(403, 'role_not_allowed');
  }
}

/**
 * 403 company_scope: the command names another company's company, app, link or key, one that does
 * not exist (the same answer, so nothing is learnt of other companies), or nothing at all.
 */
export class CompanyScopeError extends ServiceError {
  constructor() {
    super(403, 'company_scope');
  }
}

/** The access rule of a command; a command missing from the table is an operator's (a new command is closed until listed). */
export function accessOf(command: string): CommandAccess {
  return COMMAND_ROLES[command] ?? { role: 'operator', changes: true };
}

export interface Authorized {
  readonly access: CommandAccess;
  /** The company the command acts in, when a scope flag names one (an operator's may name none). */
  readonly target?: ScopedTarget;
  readonly scopeFlag?: ScopeFlag;
}

/**
 * Refuses the command unless the member's role reaches its minimum and everything it names is of
 * the member's company. Every scope flag given is checked (a command with two cannot pair one of
 * the member's with another company's).
 */
export async function authorizeCommand(
  member: Member,
  command: string,
  flags: Readonly<Record<string, unknown>>,
  lookUp: TargetLookup,
): Promise<Authorized> {
  const access = accessOf(command);
  if (!reaches(member, access.role)) throw new RoleNotAllowedError();
  let first: { flag: ScopeFlag; target: ScopedTarget | undefined } | undefined;
  for (const flag of SCOPE_FLAGS) {
    const value = flags[flag];
    if (typeof value !== 'string') continue;
    const target = await lookUp(flag, value);
    if (member.kind === 'company' && target?.companyId !== member.companyId) throw new CompanyScopeError();
    first ??= { flag, target };
  }
  if (!first) {
    if (member.kind === 'company' && !UNSCOPED.has(command)) throw new CompanyScopeError();
    return { access };
  }
  return { access, scopeFlag: first.flag, ...(first.target ? { target: first.target } : {}) };
}
