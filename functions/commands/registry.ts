import { healthSourcesOfEnvironment } from '../adapters/health-sources';
import { type AdminCommand, type Target, UsageError } from './command';
import { costCommands } from './cost-commands';
import { flagWording } from './flags';
import { fxCommands } from './fx-commands';
import { healthCommands } from './health-commands';
import { installCommands } from './install-commands';
import { linkCommands } from './link-commands';
import { postbackCommands } from './postback-commands';
import { reportCommands } from './report-commands';
import { skanCommands } from './skan-commands';
import { tenantCommands } from './tenant-commands';
import { userCommands } from './user-commands';

/**
 * The commands the deployed console's API serves (functions/console-api.ts, ADR 0007), each with a
 * role in command-roles.ts. They are bundled into a Lambda function, so nothing here may reach the
 * manifest's text, DuckDB or the local runtime (test/stack/bundled-functions.test.ts). The admin
 * CLI and the operator's console run these and the operator's own (`export run`, `sql`, `rebuild`:
 * admin/commands.ts), which the console's function has neither the grants nor the time for.
 * `health` reads what the function's environment names (FunctionSpec.healthView).
 */
export const CONSOLE_COMMANDS: readonly AdminCommand[] = registry([
  ...tenantCommands,
  ...linkCommands,
  ...reportCommands,
  ...installCommands,
  ...postbackCommands,
  ...costCommands,
  ...fxCommands,
  ...skanCommands,
  ...userCommands,
  ...healthCommands((target) => healthSourcesOfEnvironment(target.baseUrl)),
]);

/** A list of commands, refused when two share a name. */
export function registry(commands: readonly AdminCommand[]): readonly AdminCommand[] {
  const seen = new Set<string>();
  for (const command of commands) {
    if (seen.has(command.name)) throw new Error(`two admin commands are named ${command.name}`);
    seen.add(command.name);
  }
  return commands;
}

/** A command with its flags checked, ready to run against a target. */
export interface ParsedCommand {
  readonly command: AdminCommand;
  readonly flags: unknown;
}

/**
 * Checks the flags (as the CLI reads them: strings, and `true` for a boolean flag) against the
 * command's schema, refusing unknown ones. Every refusal is a UsageError naming the flag, in
 * plain words (`--install-uuid is required`); a rule across flags says its own sentence.
 */
export function parseCommandOf(
  commands: readonly AdminCommand[],
  name: string,
  rawFlags: Readonly<Record<string, unknown>>,
): ParsedCommand {
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(`unknown command: ${name || '(none)'}`);
  const known = Object.keys(command.flags.shape);
  const unknown = Object.keys(rawFlags).filter((flag) => !known.includes(flag));
  if (unknown.length) throw new UsageError(`${command.name} takes no --${unknown[0]} flag`, command.name, unknown[0]);
  const parsed = command.flags.safeParse(rawFlags, { error: flagWording });
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    if (issue === undefined) throw new UsageError(`${command.name}: its flags were refused`, command.name);
    const flag = issue.path[0] === undefined ? undefined : String(issue.path[0]);
    throw new UsageError(issue.code === 'custom' || flag === undefined ? issue.message : `--${flag} ${issue.message}`, command.name, flag);
  }
  return { command, flags: parsed.data };
}

export function runParsed({ command, flags }: ParsedCommand, target: Target): Promise<object> {
  return command.execute(flags as never, target);
}
