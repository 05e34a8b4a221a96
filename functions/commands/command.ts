import type { z } from 'zod';

/**
 * One admin operation, as the CLI (`bin/admin.ts`) and the console (`console/server.ts`) both run
 * it: a name of two words (three for a group within a group: `skan schema set`), a zod schema of its flags (as `--flag value` strings and `--flag`
 * booleans, exactly what the CLI reads and what the console posts), and the operation itself,
 * which gets the parsed flags and answers one JSON object.
 */
export interface AdminCommand<Flags extends z.ZodObject = z.ZodObject> {
  /** Two words, as typed: `company create` (or three: `skan schema set`). */
  readonly name: string;
  readonly flags: Flags;
  /** Flags that take no value (`--honeypot`); every other flag is read as a string. */
  readonly booleanFlags?: readonly string[];
  /** Flags that take a comma list and may be given more than once: the CLI joins the values with commas. */
  readonly listFlags?: readonly string[];
  /**
   * A flag the CLI also takes as the command's one positional argument (`sql --app-key K "SELECT 1"`
   * fills `query`); the console posts it as that flag.
   */
  readonly argument?: { readonly flag: string; readonly name: string };
  /** The command's line(s) of the usage text, without the command name's indentation. */
  readonly usage: string;
  execute(flags: z.output<Flags>, target: Target): Promise<object>;
}

/** Where the operation runs: the local runtime, or a deployed stack (its CloudFormation outputs). */
export interface Target {
  /** The service's public base URL (links are printed under it). */
  readonly baseUrl: string;
  /** Local runtime only: its private control port (schedules). */
  readonly control?: string;
  /** Deployed stack only: its name. */
  readonly stack?: string;
  /** Local runtime only: it was started with POSTBACK_ALLOW_LOOPBACK=1 (endpoints.json), so postbacks may go to 127.0.0.1. */
  readonly postbackAllowLoopback?: boolean;
}

/** Keeps a command's flag types attached to its execute (the registry itself holds them erased). */
export function defineCommand<Flags extends z.ZodObject>(command: AdminCommand<Flags>): AdminCommand {
  return command as unknown as AdminCommand;
}

/** Wrong command or flags: the CLI prints it below the usage text and exits 2; the console answers 400. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose flags were refused, when the words on the line named one: its usage is the one shown. */
    readonly command?: string,
    /** The flag at fault (`lookback-days`), when one is: the console shows the refusal beside that field. */
    readonly flag?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The target cannot be reached (no local runtime, no such stack output). */
export class TargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetError';
  }
}
