import { parseArgs } from 'node:util';
import { ADMIN_COMMANDS, flagOptions, parseCommand, runParsed, UsageError } from '../admin/commands';
import { errorAnswer } from '../admin/errors';
import { resolveTarget, runSchedule } from '../admin/target';

/**
 * The admin CLI (DESIGN section 3). Every command prints exactly one JSON object on stdout;
 * errors go to stderr with a non-zero exit. It targets the running local runtime through
 * DATA_DIR/endpoints.json, or a deployed stack with --stack NAME and the usual AWS credentials.
 * The commands themselves live in admin/ and are shared with the console (`npm run console`).
 */

export { UsageError } from '../admin/commands';

const USAGE = `usage: npm run --silent admin -- <command> [flags] [--stack NAME]

${ADMIN_COMMANDS.flatMap((command) => command.usage.split('\n').map((line) => `  ${line}`)).join('\n')}
  schedule run NAME          (local runtime: fires a schedule now and waits for it)`;

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
  let parsedArgs;
  try {
    parsedArgs = parseArgs({ args: joinDashValues(argv, options), allowPositionals: true, strict: true, options });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsedArgs;
  const stack = values.stack as string | undefined;
  const flags = Object.fromEntries(Object.entries(values).filter(([key]) => key !== 'stack'));

  if (positionals[0] === 'schedule' && positionals[1] === 'run') {
    if (!positionals[2]) throw new UsageError('schedule run needs a schedule name');
    if (stack) throw new UsageError('schedule run drives the local runtime; in AWS, invoke the function from the Lambda console or CLI');
    return runSchedule(await resolveTarget(undefined), positionals[2]);
  }

  // A command is one word (`rebuild`) or two (`company create`); nothing follows it but flags.
  const name = [positionals.slice(0, 2).join(' '), positionals[0]].find((candidate) => ADMIN_COMMANDS.some((c) => c.name === candidate));
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
    process.stderr.write(`error: ${error instanceof UsageError ? `${message}\n\n${USAGE}` : message}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
}

if (require.main === module) void main();
