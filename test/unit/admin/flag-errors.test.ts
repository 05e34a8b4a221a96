// What the admin CLI and the console say about a command's flags: one plain sentence that names
// the flag and what it must be, never zod's or node's own wording.

import { parseCommand, UsageError } from '../../../admin/commands';
import { runAdmin } from '../../../bin/admin';

const refusal = (name: string, flags: Record<string, unknown>) => {
  try {
    parseCommand(name, flags);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message;
  }
  throw new Error(`${name} took ${JSON.stringify(flags)}`);
};

const link = { 'app-key': 'app_live_x', partner: 'meta' };

describe('a refused flag, in plain words', () => {
  it.each([
    ['a missing flag', 'install show', { 'app-key': 'app_live_x' }, '--install-uuid is required'],
    ['a number over its limit', 'link create', { ...link, 'lookback-days': '31' }, '--lookback-days must be at most 30'],
    ['a number that must be positive', 'company create', { name: 'x', 'monthly-cap': '-3' }, '--monthly-cap must be greater than 0'],
    ['a number under its minimum', 'postback log', { 'app-key': 'app_live_x', limit: '0' }, '--limit must be at least 1'],
    ['a word where a number goes', 'link create', { ...link, 'lookback-days': 'week' }, '--lookback-days must be a number'],
    ['a fraction where a whole number goes', 'link create', { ...link, 'lookback-days': '2.5' }, '--lookback-days must be a whole number'],
    ['an empty value', 'link create', { ...link, partner: '' }, '--partner must not be empty'],
    ['a value too long', 'link create', { ...link, campaign: 'x'.repeat(201) }, '--campaign must be at most 200 characters'],
    ['a value not among the choices', 'company create', { name: 'x', plan: 'gold' }, '--plan must be free or paid'],
    [
      'a probabilistic basis not documented',
      'app update',
      { 'app-key': 'app_live_x', 'probabilistic-basis': 'contract' },
      '--probabilistic-basis must be consent, legitimate_interest or off',
    ],
    [
      'a value not among several choices',
      'report show',
      { 'app-key': 'app_live_x', report: 'sales' },
      '--report must be attribution, revenue, cohorts, events, performance or skan',
    ],
    [
      'a server key name too long',
      'server-key create',
      { 'app-key': 'app_live_x', name: 'x'.repeat(101) },
      '--name must be at most 100 characters',
    ],
    ['a server key name of blanks', 'server-key create', { 'app-key': 'app_live_x', name: '   ' }, '--name must not be empty'],
    [
      'a server key name with a control character',
      'server-key create',
      { 'app-key': 'app_live_x', name: 'BI\u0007export' },
      '--name must not contain control characters',
    ],
    [
      'a URL of another scheme',
      'app create',
      { 'company-key': 'co_live_x', name: 'x', 'ios-url': 'javascript:alert(1)' },
      '--ios-url must be an http or https URL',
    ],
    [
      'an exchange-rate day past 2099 (issue 36)',
      'fx set',
      { date: '9999-12-31', file: 'rates.json' },
      '--date must be a calendar day from 2000-01-01 to 2099-12-31, as YYYY-MM-DD',
    ],
    [
      'an exchange-rate day before 2000',
      'fx show',
      { date: '1999-12-31' },
      '--date must be a calendar day from 2000-01-01 to 2099-12-31, as YYYY-MM-DD',
    ],
    [
      'a time zone Intl does not know',
      'app create',
      { 'company-key': 'co_live_x', name: 'x', 'time-zone': 'Mars/Olympus' },
      '--time-zone must be an IANA time zone, such as Europe/Berlin or UTC',
    ],
    [
      'an offset for a time zone',
      'app update',
      { 'app-key': 'app_live_x', 'time-zone': '+09:00' },
      '--time-zone must be an IANA time zone, such as Europe/Berlin or UTC',
    ],
    ['a malformed uuid', 'install show', { 'app-key': 'app_live_x', 'install-uuid': 'device-1' }, '--install-uuid must be a UUID'],
    [
      'a country of three letters',
      'link try',
      { 'link-id': 'l', country: 'USA' },
      '--country must be a two-letter country code (ISO 3166-1 alpha-2)',
    ],
    ['a list with no country', 'link create', { ...link, 'countries-allow': ',' }, '--countries-allow must not be empty'],
    ['a flag of another command', 'company create', { name: 'x', 'app-key': 'app_live_x' }, 'company create takes no --app-key flag'],
  ])('names %s and what it must be', (_case, name, flags, message) => {
    expect(refusal(name, flags)).toBe(message);
  });

  it('keeps a rule across flags as its own sentence', () => {
    expect(refusal('server-key revoke', {})).toBe('give exactly one of --server-key and --key-id');
  });

  it.each([
    ['a flag no command has', ['company', 'create', '--name', 'x', '--bogus', '1'], 'company create takes no --bogus flag'],
    ['a flag without its value', ['company', 'create', '--name'], '--name needs a value'],
    ['a value given to a flag that takes none', ['app', 'create', '--probabilistic=yes'], '--probabilistic takes no value'],
    ['a flag of ours where a value goes', ['company', 'create', '--name', '--plan=paid'], '--name needs a value'],
    ['a word after the command', ['company', 'create', 'extra', '--name', 'x'], 'unknown command: company create extra'],
    ['a group without its command', ['company'], 'unknown command: company'],
    ['a schedule without its name', ['schedule', 'run'], 'schedule run needs a schedule name'],
  ])('says so for %s on the command line', async (_case, argv, message) => {
    await expect(runAdmin(argv)).rejects.toThrow(new UsageError(message));
  });
});
