import { CODE_SENTENCES, CONSOLE_DOWN, flagLabel, plainError, RUNTIME_DOWN } from '../../../console/ui/errors';
import { PERFORMANCE_ERRORS } from '../../../functions/domain/analytics/performance-report';
import { REPORT_ERRORS } from '../../../functions/domain/reports/report-query';

describe('errors in plain words', () => {
  it("say a refused flag with the form's label, or the flag as words", () => {
    expect(plainError({ message: '--lookback-days must be at most 30', flag: 'lookback-days' })).toBe('Lookback days must be at most 30');
    expect(plainError('--lookback-days must be at most 30', { 'lookback-days': 'Attribution window (days)' })).toBe(
      'Attribution window (days) must be at most 30',
    );
    expect(plainError(new Error('--ios-url must be a valid url'))).toBe('Ios url must be a valid url');
    expect(plainError('--name is required', { name: 'Name' })).toBe('Name is required');
    expect(plainError('link create takes no --colour flag')).toBe('The form sent a field the command does not take (Colour)');
    // A sentence that mentions flags keeps its words, the flags in words.
    expect(plainError('link update: give at least one of --campaign, --ios-url')).toBe(
      'Link update: give at least one of campaign, ios url',
    );
  });

  it('turn every Reporting API code into a sentence that says what to do, never the code', () => {
    for (const code of [...Object.keys(REPORT_ERRORS), ...Object.keys(PERFORMANCE_ERRORS), 'invalid_window', 'report_unavailable']) {
      const text = plainError({ message: code });
      expect(text).not.toContain('_');
      expect(text).toMatch(/^[A-Z].*\.$/);
    }
    expect(plainError('window_too_large')).toBe('The period is longer than 365 days: choose a shorter one.');
    expect(plainError({ message: 'app not found' })).toBe(CODE_SENTENCES['app not found']);
  });

  it('say that the runtime is not running, never a socket error', () => {
    const down = {
      message: 'no local runtime is running for DATA_DIR=/x/.data: start one with `npm start`, or pass --stack NAME',
      unreachable: 'runtime' as const,
    };
    expect(plainError(down)).toBe(RUNTIME_DOWN);
    expect(RUNTIME_DOWN).toBe('The runtime is not running: start it with npm start');
    expect(plainError({ message: 'the console server did not answer', unreachable: 'console' as const })).toBe(CONSOLE_DOWN);
    expect(plainError('connect ECONNREFUSED 127.0.0.1:4566')).toBe(RUNTIME_DOWN);
    // A stack's look-up keeps its own words.
    expect(plainError({ message: "stack prod has no output ApiUrl; is it this service's stack?", unreachable: 'runtime' as const })).toBe(
      "Stack prod has no output ApiUrl; is it this service's stack?",
    );
  });

  it('write a flag as words', () => {
    expect(flagLabel('lookback-days')).toBe('Lookback days');
    expect(flagLabel('app-key')).toBe('App key');
  });
});
