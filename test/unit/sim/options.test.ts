import { parseOptions } from '../../../sim/simulate';

describe('the simulator command line', () => {
  it('defaults to two apps of 100 installs over 45 days with a fresh seed', () => {
    const options = parseOptions([]);
    expect(options).toMatchObject({ apps: 2, installs: 100, days: 45, check: false, json: false, concurrency: 8 });
    expect(options.seed).toMatch(/^[0-9a-f]{8}$/);
  });

  it('takes every flag', () => {
    expect(
      parseOptions([
        '--apps',
        '3',
        '--installs',
        '50',
        '--days',
        '60',
        '--seed',
        'x',
        '--check',
        '--json',
        '--stack',
        'Prod',
        '--base-url',
        'https://m.example.com',
      ]),
    ).toMatchObject({
      apps: 3,
      installs: 50,
      days: 60,
      seed: 'x',
      check: true,
      json: true,
      stack: 'Prod',
      baseUrl: 'https://m.example.com',
    });
  });

  it('refuses a period the 90-day rule would cut, and flags it does not know', () => {
    expect(() => parseOptions(['--days', '86'])).toThrow('--days must be an integer from 1 to 85');
    expect(() => parseOptions(['--installs', '2.5'])).toThrow('--installs');
    expect(() => parseOptions(['--base-url', 'ftp://x'])).toThrow('--base-url');
    expect(() => parseOptions(['--verbose'])).toThrow();
  });
});
