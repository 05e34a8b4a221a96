import { type ChangeLog, changeRecord } from '../domain/team/changes';
import { type Member, reaches } from '../domain/team/members';
import type { Target } from './command';
import { accessOf, authorizeCommand, type TargetLookup } from './command-roles';
import { CONSOLE_COMMANDS, parseCommandOf, runParsed } from './registry';

/**
 * The console API's one operation (functions/console-api.ts, deployed and under `npm start`): a
 * signed-in member runs a command of the console's registry (registry.ts). In order: the flags are checked (400), the member's role and company are checked
 * against the command (403 role_not_allowed, 403 company_scope: command-roles.ts), the
 * command runs, and a command that changes something is written to the change log with the state
 * before and after. A member's `company list` holds their own company alone.
 */
export interface ConsoleCall {
  readonly member: Member;
  readonly command: string;
  readonly flags: Readonly<Record<string, unknown>>;
}

export interface ConsolePorts {
  readonly target: Target;
  readonly lookUp: TargetLookup;
  readonly changes: ChangeLog;
  readonly nowMs?: () => number;
}

export async function runConsoleCommand(call: ConsoleCall, ports: ConsolePorts): Promise<object> {
  const parsed = parseCommandOf(CONSOLE_COMMANDS, call.command, call.flags);
  const { access, target, scopeFlag } = await authorizeCommand(call.member, parsed.command.name, call.flags, ports.lookUp);
  const before =
    access.changes && access.before && scopeFlag
      ? await runParsed(parseCommandOf(CONSOLE_COMMANDS, access.before, { [scopeFlag]: call.flags[scopeFlag] }), ports.target)
      : (target?.record ?? null);
  const answer = await runParsed(parsed, ports.target);
  if (access.changes) {
    const record = changeRecord(
      call.member,
      { companyId: target?.companyId, command: parsed.command.name, flags: call.flags, before, after: answer },
      (ports.nowMs ?? Date.now)(),
    );
    await ports.changes.append(record);
  }
  return scopedAnswer(call.member, parsed.command.name, answer);
}

/** `company list` is the one command whose answer spans companies: a member sees their own. */
function scopedAnswer(member: Member, command: string, answer: object): object {
  if (member.kind === 'operator' || command !== 'company list') return answer;
  const { companies } = answer as { companies?: readonly { company_id?: string }[] };
  return { ...answer, companies: (companies ?? []).filter((company) => company.company_id === member.companyId) };
}

/** The most a console API request body may hold (the local console's limit too): a cost CSV is sent in parts under it. */
export const MAX_CONSOLE_BODY_BYTES = 64 * 1024;

/** A console API request as both servers take it: {"command": "...", "flags": {...}}, else 400. */
export function consoleRequest(body: unknown): { command: string; flags: Record<string, unknown> } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { command, flags = {} } = body as Record<string, unknown>;
  if (typeof command !== 'string' || command.length > 100 || typeof flags !== 'object' || flags === null || Array.isArray(flags))
    return undefined;
  return { command, flags: flags as Record<string, unknown> };
}

/** What the page may run, for its menus: the commands the member's role reaches (the API checks each call regardless). */
export function commandsFor(member: Member): string[] {
  return CONSOLE_COMMANDS.filter((command) => reaches(member, accessOf(command.name).role)).map((command) => command.name);
}

/** The member as the page shows them. */
export const memberView = (member: Member) => ({
  email: member.email,
  role: member.kind === 'operator' ? 'operator' : member.role,
  company_id: member.kind === 'operator' ? null : member.companyId,
});
