import { z } from 'zod';
import { isTimeZone } from '../domain/common/days';
import { UUID_PATTERN } from '../domain/common/uuid';

/**
 * Flag schemas more than one command reads. A message given here is said after the flag's name,
 * as flagWording's are: `--install-uuid must be a UUID`.
 */
export const url = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' });
/** A link's destinations: https only, as the stores' and any page worth sending a visitor to are. */
export const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' });
export const name = z.string().trim().min(1).max(200);
export const key = z.string().min(1);
/** A partner's name, as links, postbacks and ad network mappings carry it. */
export const partner = z.string().trim().min(1).max(100);
export const countries = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((c) => c.trim().toUpperCase())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^[A-Z]{2}$/, 'must be two-letter country codes (ISO 3166-1 alpha-2), separated by commas')).min(1));
export const intFlag = z.coerce.number().int().positive();
/**
 * An IANA time zone name this runtime knows (Intl's database), as the reports' days use it. A
 * refinement's message is said as it is (a rule across flags is one), so this one names the flag.
 */
export const timeZone = z.string().refine(isTimeZone, '--time-zone must be an IANA time zone, such as Europe/Berlin or UTC');
/** Stored lower-case, as the audit record keeps it. */
export const installUuid = z
  .string()
  .regex(UUID_PATTERN, 'must be a UUID')
  .transform((uuid) => uuid.toLowerCase());

export type FlagOptions = Readonly<Record<string, { type: 'string' | 'boolean' }>>;

const TYPE_WORDS: Readonly<Record<string, string>> = {
  number: 'a number',
  int: 'a whole number',
  string: 'text',
  boolean: 'true or false',
};
const orList = (values: readonly string[]) =>
  values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;

/**
 * What an operator reads when a flag is refused, said after the flag's name (`--lookback-days must
 * be at most 30`), in place of zod's wording for programmers ("Too big: expected number to be
 * <=30"). Passed to safeParse, so a schema's own message (written the same way) still wins.
 */
export const flagWording: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${TYPE_WORDS[issue.expected] ?? issue.expected}`;
    case 'too_small':
      if ((issue.origin === 'string' || issue.origin === 'array') && Number(issue.minimum) === 1) return 'must not be empty';
      if (issue.origin === 'string') return `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array') return `must have at least ${issue.minimum} values`;
      return issue.inclusive ? `must be at least ${issue.minimum}` : `must be greater than ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array') return `must have at most ${issue.maximum} values`;
      return issue.inclusive ? `must be at most ${issue.maximum}` : `must be less than ${issue.maximum}`;
    case 'invalid_value':
      return `must be ${orList(issue.values.map(String))}`;
    case 'invalid_format':
      return issue.format === 'regex' ? `must match ${String(issue.pattern)}` : `must be a valid ${issue.format}`;
    default:
      return undefined;
  }
};

/**
 * node:util parseArgs's refusal ("Option '--name <value>' argument missing"), said as a flag's
 * refusal is: the console's own command line (`npm run console -- --port N`). The admin CLI reads
 * its line with commander and says its refusals in the same words (bin/admin.ts).
 */
export function commandLineWording(error: unknown, options: FlagOptions): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const flag = /'(--?[^' =<]+)/.exec(message)?.[1];
  if (!flag) return message;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag ${flag}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const name = flag.replace(/^--?/, '');
    const option = Object.hasOwn(options, name) ? options[name] : undefined;
    return option?.type === 'boolean' ? `${flag} takes no value` : `${flag} needs a value`;
  }
  return message;
}
