import type { AdminCommand, Target } from '../functions/commands/command';
import { CONSOLE_COMMANDS, type ParsedCommand, parseCommandOf, registry, runParsed } from '../functions/commands/registry';
import { exportCommands } from './export-commands';
import { adminHealthCommands } from './health-commands';
import { rebuildCommands } from './rebuild-commands';
import { sqlCommands } from './sql-commands';

export type { AdminCommand, Target } from '../functions/commands/command';
export { defineCommand, TargetError, UsageError } from '../functions/commands/command';
export { type ParsedCommand, runParsed } from '../functions/commands/registry';

/**
 * Every admin operation, once: `bin/admin.ts` reads them from argv (each one a commander
 * subcommand), `console/server.ts` from the operator console's requests, and both check their
 * flags with parseCommand and run them with runParsed. They are the deployed console's commands
 * (functions/commands/registry.ts) and the operator's own, which stay off the console API's
 * function: `export run` writes the export bucket (the hourly export's work, on demand), `sql`
 * runs DuckDB on this machine, `rebuild` reads an app's whole audit history (longer than the
 * console API's 29 s). `health` is both: here it reads what the target names (a stack's outputs,
 * the local runtime), in the console API's function what its environment names.
 */
export const ADMIN_COMMANDS: readonly AdminCommand[] = registry([
  // `health` reads where the target says (admin/health-sources.ts), not the function's environment.
  ...CONSOLE_COMMANDS.filter((command) => !adminHealthCommands.some((own) => own.name === command.name)),
  ...adminHealthCommands,
  ...exportCommands,
  ...sqlCommands,
  ...rebuildCommands,
]);

export function parseCommand(name: string, rawFlags: Readonly<Record<string, unknown>>): ParsedCommand {
  return parseCommandOf(ADMIN_COMMANDS, name, rawFlags);
}

export function runCommand(name: string, rawFlags: Readonly<Record<string, unknown>>, target: Target): Promise<object> {
  return runParsed(parseCommand(name, rawFlags), target);
}
