import { parseArgs } from 'node:util';
import { ADMIN_COMMANDS, flagOptions, parseCommand, runParsed, UsageError } from '../admin/commands';
import { errorAnswer } from '../admin/errors';
import { commandLineWording } from '../admin/flags';
import { resolveTarget, runSchedule } from '../admin/target';

/**
 * The admin CLI (docs/architecture.md section 3). Every command prints exactly one JSON object on stdout;
 * errors go to stderr with a non-zero exit. It targets the running local runtime through
 * DATA_DIR/endpoints.json, or a deployed stack with --stack NAME and the usual AWS credentials.
 * The commands themselves live in admin/ and are shared with the console (`npm run console`).
 */

export { UsageError } from '../admin/commands';

const USAGE_LINE = 'usage: npm run --silent admin -- <command> [flags] [--stack NAME]';
const USAGES = new Map([
  ...ADMIN_COMMANDS.map((command) => [command.name, command.usage] as const),
  ['schedule run', 'schedule run NAME          (local runtime: fires a schedule now and waits for it)'] as const,
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

/** The command the words on the line name: `company create` in `company create --name x`. */
function commandNamed(positionals: readonly string[]): string | undefined {
  return [positionals.slice(0, 2).join(' '), positionals[0]].find((candidate) => USAGES.has(candidate));
}

/**
 * Ids are base64url, so one in six begins with '-', and parseArgs refuses `--link-id -Xy…` as
 * ambiguous. A value-taking flag followed by anything that is not itself a flag of ours takes
 * it as its value, written `--link-id=-Xy…` for parseArgs.
 */
function joinDashValues(argv: readonly string[], options: Readonly<Record<string, { type: 'string' | 'boolean' }>>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : undefined;
    const next = argv[i + 1];
    const nextIsFlag = next?.startsWith('--') && Object.hasOwn(options, next.slice(2).split('=')[0]);
    if (name && Object.hasOwn(options, name) && options[name].type === 'string' && next?.startsWith('-') && !nextIsFlag) {
      joined.push(`${argv[i]}=${next}`);
      i += 1;
    } else {
      joined.push(argv[i]);
    }
  }
  return joined;
}

export async function runAdmin(argv: string[]): Promise<Record<string, unknown>> {
  const options = { ...flagOptions(), stack: { type: 'string' as const } };
  const args = joinDashValues(argv, options);
  let parsedArgs;
  try {
    parsedArgs = parseArgs({ args, allowPositionals: true, strict: true, options });
  } catch (error) {
    // Read again leniently, only to know which command the refused flag was given to.
    const command = commandNamed(parseArgs({ args, allowPositionals: true, strict: false, options }).positionals);
    throw new UsageError(commandLineWording(error, options, command), command);
  }
  const { values, positionals } = parsedArgs;
  const stack = values.stack as string | undefined;
  const flags = Object.fromEntries(Object.entries(values).filter(([key]) => key !== 'stack'));

  if (positionals[0] === 'schedule' && positionals[1] === 'run') {
    if (!positionals[2]) throw new UsageError('schedule run needs a schedule name', 'schedule run');
    if (stack)
      throw new UsageError(
        'schedule run drives the local runtime; in AWS, invoke the function from the Lambda console or CLI',
        'schedule run',
      );
    return runSchedule(await resolveTarget(undefined), positionals[2]);
  }

  // A command is one word (`rebuild`) or two (`company create`); nothing follows it but flags.
  const name = commandNamed(positionals);
  if (!name || name.split(' ').length !== positionals.length) throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}`);
  // Flags are checked before the target is reached, so a typo costs no AWS call.
  const parsed = parseCommand(name, flags);
  return (await runParsed(parsed, await resolveTarget(stack))) as Record<string, unknown>;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(argv.length === 0 ? 2 : 0);
  }
  try {
    const result = await runAdmin(argv);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    const { message } = errorAnswer(error);
    process.stderr.write(`${error instanceof UsageError ? `${usageFor(error.command)}\n\n` : ''}error: ${message}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
}

if (require.main === module) void main();
