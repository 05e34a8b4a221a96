import { Command, CommanderError, Option } from 'commander';
import { ADMIN_COMMANDS, type AdminCommand, type ParsedCommand, parseCommand, runParsed, UsageError } from '../admin/commands';
import { resolveTarget, runSchedule } from '../admin/target';
import { errorAnswer } from '../functions/commands/errors';

/**
 * The admin CLI (docs/architecture.md section 3). Every command prints exactly one JSON object on stdout;
 * errors go to stderr with a non-zero exit. It targets the running local runtime through
 * DATA_DIR/endpoints.json, or a deployed stack with --stack NAME and the usual AWS credentials.
 * The commands themselves live in admin/ and are shared with the console (`npm run console`).
 *
 * The command line is read by commander: a command of the registry is a subcommand of its first
 * word (`company create`), each of its flags an option (`--name <N>`, or `--honeypot` for a
 * boolean flag), and `--help` at any level is commander's. Commander only reads the line; the
 * flags' values are checked by the command's zod schema (parseCommand), as the console's are.
 */

export { UsageError } from '../admin/commands';

const PROGRAM = 'npm run --silent admin --';
const USAGE_LINE = `usage: ${PROGRAM} <command> [flags] [--stack NAME]`;
const SCHEDULE_RUN = 'schedule run NAME          (local runtime: fires a schedule now and waits for it)';
const USAGES = new Map([
  ...ADMIN_COMMANDS.map((command) => [command.name, command.usage] as const),
  ['schedule run', SCHEDULE_RUN] as const,
]);
const indented = (usage: string) =>
  usage
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
const USAGE = `${USAGE_LINE}\n\n${[...USAGES.values()].map(indented).join('\n')}`;

/**
 * What a usage error prints above itself: the usage of the command it concerns, or every
 * command's when the line names none. The error itself comes last, where the eye lands.
 */
function usageFor(command: string | undefined): string {
  const usage = command === undefined ? undefined : USAGES.get(command);
  return usage === undefined ? USAGE : `${USAGE_LINE}\n\n${indented(usage)}\n\n(--help lists every command)`;
}

/**
 * Every flag of every command, and --stack. Commander gives a flag that takes a value the next
 * argument, whatever it begins with, which ids need: they are base64url, so one in six begins
 * with '-' (`--link-id -Xy…`). Only one of our own flags is not a value (`--name --plan paid`):
 * the flag before it is refused as having none.
 */
const OUR_FLAGS = new Set(['stack', ...ADMIN_COMMANDS.flatMap((command) => Object.keys(command.flags.shape))]);

/** A flag's value name in the help (`--name <N>`), as the command's usage writes it. */
function valueName(command: AdminCommand, flag: string): string {
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`--${escaped} ([^\\s\\]]+)`).exec(command.usage)?.[1] ?? 'value';
}

/** A usage as one paragraph, for commander to wrap to the terminal in the help. */
const oneLine = (usage: string) => usage.replace(/\s+/g, ' ');

/** The words of a refused command line up to its first flag: `company explode` in `company explode --name x`. */
const words = (args: readonly string[]) => {
  const flag = args.findIndex((arg) => arg.startsWith('-'));
  return flag === -1 ? args : args.slice(0, flag);
};

/**
 * Commander's refusals, said as the CLI's own (`company create takes no --bogus flag`, `--name
 * needs a value`), with the usage of the command they concern; words that name no command are
 * an unknown command, shown with every command's usage. Help is not a refusal: its
 * CommanderError goes through, for main to exit with its code.
 */
function refusal(error: CommanderError, at: Command, path: readonly string[], line: readonly string[], leaf?: AdminCommand): Error {
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.help') return error;
  const name = path.join(' ');
  const quoted = /'([^']*)'/.exec(error.message)?.[1];
  if (leaf && error.code === 'commander.unknownOption' && quoted !== undefined) {
    const [flag = quoted] = quoted.split('=');
    const isBoolean = quoted.includes('=') && at.options.some((option) => option.long === flag && option.isBoolean());
    return new UsageError(isBoolean ? `${flag} takes no value` : `${name} takes no ${flag} flag`, name);
  }
  if (error.code === 'commander.optionMissingArgument') {
    const option = [at, ...ancestors(at)].flatMap((command) => command.options).find((o) => quoted === o.flags);
    // --stack is read above the command; the words on the line still say which command it was given to.
    return new UsageError(`${option?.long ?? quoted} needs a value`, leaf ? name : commandNamed(line));
  }
  if (error.code === 'commander.missingArgument' && name === 'schedule run')
    return new UsageError('schedule run needs a schedule name', name);
  if (error.code === 'commander.unknownOption' && path.length === 0 && quoted !== undefined)
    return new UsageError(`unknown flag ${quoted.split('=')[0] ?? quoted}`);
  return new UsageError(`unknown command: ${[...path, ...words(at.args)].join(' ') || '(none)'}`);
}

/** The command the words on the line name: `company create` in `company create --name x --stack`. */
function commandNamed(line: readonly string[]): string | undefined {
  const named = words(line);
  return [named.slice(0, 3).join(' '), named.slice(0, 2).join(' '), named[0]].find(
    (candidate) => candidate !== undefined && USAGES.has(candidate),
  );
}

function ancestors(command: Command): Command[] {
  return command.parent ? [command.parent, ...ancestors(command.parent)] : [];
}

/** What the line asks for, once commander has read it. */
type Request = { kind: 'command'; parsed: ParsedCommand; stack?: string } | { kind: 'schedule'; schedule: string; stack?: string };

/**
 * The CLI's command tree, made afresh for each line read (commander keeps what it parsed on
 * the commands). Its help goes to stderr, as every word of the CLI but the answer does.
 */
function program(line: readonly string[], found: (request: Request) => void): Command {
  const output = { writeOut: (text: string) => process.stderr.write(text), writeErr: (text: string) => process.stderr.write(text) };
  const configure = (command: Command, path: readonly string[], leaf?: AdminCommand) =>
    command
      .configureOutput({ ...output, outputError: () => undefined })
      .showSuggestionAfterError(false)
      .configureHelp({ showGlobalOptions: true })
      .exitOverride((error) => {
        throw refusal(error, command, path, line, leaf);
      });

  const root = configure(new Command(PROGRAM), [])
    .usage('<command> [flags] [--stack NAME]')
    .description(
      'Runs one admin command and prints its answer, one JSON object, on stdout; errors go to stderr.\n' +
        'It reaches the local runtime (`npm start`, through DATA_DIR/endpoints.json), or a deployed stack with --stack.',
    )
    .addOption(new Option('--stack <NAME>', 'a deployed stack, reached with the usual AWS credentials'))
    .helpCommand(true)
    .addHelpText('after', `\nEvery command:\n\n${[...USAGES.values()].map(indented).join('\n')}`)
    // Words that name no command: `unknown command: …`, and so is a line that names none.
    .action(() => {
      throw new UsageError('unknown command: (none)');
    });
  const stack = () => root.getOptionValue('stack') as string | undefined;

  // A command's leading words are groups, nested as deep as its name goes (`skan schema set`).
  const groups = new Map<string, Command>();
  const parentOf = (words: readonly string[]): Command => {
    let parent = root;
    for (let end = 1; end < words.length; end++) {
      const path = words.slice(0, end);
      const name = path.join(' ');
      const existing = groups.get(name);
      if (existing) {
        parent = existing;
        continue;
      }
      const group = configure(parent.command(path.at(-1) ?? name), path)
        .usage('<command> [flags] [--stack NAME]')
        .action(() => {
          throw new UsageError(`unknown command: ${name}`);
        });
      groups.set(name, group);
      parent = group;
    }
    return parent;
  };

  for (const command of ADMIN_COMMANDS) {
    const path = command.name.split(' ');
    const leaf = configure(parentOf(path).command(path.at(-1) ?? command.name), path, command)
      .description(oneLine(command.usage))
      .summary(oneLine(command.usage).slice(command.name.length).trim())
      .usage('[flags] [--stack NAME]');
    const booleans = new Set(command.booleanFlags);
    for (const flag of Object.keys(command.flags.shape)) {
      if (booleans.has(flag)) {
        leaf.addOption(new Option(`--${flag}`));
        continue;
      }
      leaf.addOption(
        new Option(`--${flag} <${valueName(command, flag)}>`).argParser((value: string, previous: string | undefined) => {
          if (value.startsWith('--') && OUR_FLAGS.has(value.slice(2).split('=')[0] ?? ''))
            throw new UsageError(`--${flag} needs a value`, command.name);
          // A list flag given again adds to the list (`--link-domain a --link-domain b` is `a,b`).
          return previous !== undefined && command.listFlags?.includes(flag) ? `${previous},${value}` : value;
        }),
      );
    }
    if (command.argument) leaf.argument(`[${command.argument.name}]`);
    leaf.action(() => {
      const flags: Record<string, unknown> = {};
      for (const option of leaf.options) {
        const value: unknown = leaf.getOptionValue(option.attributeName());
        if (value !== undefined && option.long) flags[option.long.slice(2)] = value;
      }
      // The positional argument is its flag's value (`sql --app-key K "SELECT 1"` is --query "SELECT 1").
      const [positional] = leaf.processedArgs as (string | undefined)[];
      if (command.argument && positional !== undefined) {
        if (flags[command.argument.flag] !== undefined)
          throw new UsageError(`give ${command.argument.name} once: as the argument or as --${command.argument.flag}`, command.name);
        flags[command.argument.flag] = positional;
      }
      // Flags are checked before the target is reached, so a typo costs no AWS call.
      found({ kind: 'command', parsed: parseCommand(command.name, flags), stack: stack() });
    });
  }

  configure(parentOf(['schedule', 'run']).command('run'), ['schedule', 'run'])
    .description(oneLine(SCHEDULE_RUN))
    .summary(oneLine(SCHEDULE_RUN).slice('schedule run'.length).trim())
    .argument('<NAME>', 'the schedule: privacy-drain, health-check, ...')
    .action((schedule: string) => {
      found({ kind: 'schedule', schedule, stack: stack() });
    });
  // A group's line in the help names its commands: `company  create, list, suspend, resume`.
  for (const group of groups.values()) group.summary(group.commands.map((command) => command.name()).join(', '));
  return root;
}

/** The command line's answer; a UsageError when it names no command or its flags are refused. */
export async function runAdmin(argv: string[]): Promise<Record<string, unknown>> {
  let request: Request | undefined;
  program(argv, (found) => {
    request = found;
  }).parse(argv, { from: 'user' });
  if (!request) throw new UsageError('unknown command: (none)');

  if (request.kind === 'schedule') {
    if (request.stack)
      throw new UsageError(
        'schedule run drives the local runtime; in AWS, invoke the function from the Lambda console or CLI',
        'schedule run',
      );
    return runSchedule(await resolveTarget(undefined), request.schedule);
  }
  return (await runParsed(request.parsed, await resolveTarget(request.stack))) as Record<string, unknown>;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0) {
    // Nothing asked: the help, and the exit of a usage error.
    program(argv, () => undefined).outputHelp({ error: true });
    process.exit(2);
  }
  try {
    const result = await runAdmin(argv);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
    const { message } = errorAnswer(error);
    process.stderr.write(`${error instanceof UsageError ? `${usageFor(error.command)}\n\n` : ''}error: ${message}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
}

if (require.main === module) void main();
