import { nextFireTime } from '../../../local/scheduler';

describe('local schedules', () => {
  it('fires a rate schedule on the next multiple of its period', () => {
    const spec = { kind: 'rate', minutes: 5, function: 'f', purpose: '' } as const;
    expect(new Date(nextFireTime(spec, Date.parse('2026-11-21T10:02:30Z'))).toISOString()).toBe('2026-11-21T10:05:00.000Z');
    expect(new Date(nextFireTime(spec, Date.parse('2026-11-21T10:05:00Z'))).toISOString()).toBe('2026-11-21T10:10:00.000Z');
  });

  it('fires a daily schedule at its UTC time today, or tomorrow once that has passed', () => {
    const spec = { kind: 'daily', hourUtc: 3, minuteUtc: 0, function: 'f', purpose: '' } as const;
    expect(new Date(nextFireTime(spec, Date.parse('2026-11-21T01:00:00Z'))).toISOString()).toBe('2026-11-21T03:00:00.000Z');
    expect(new Date(nextFireTime(spec, Date.parse('2026-11-21T03:00:00Z'))).toISOString()).toBe('2026-11-22T03:00:00.000Z');
  });
});
