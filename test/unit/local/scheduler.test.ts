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

  it('fires an hourly schedule at its minute of this hour, or of the next once that has passed', () => {
    const spec = { kind: 'hourly', minuteUtc: 7, function: 'f', purpose: '' } as const;
    expect(new Date(nextFireTime(spec, Date.parse('2026-11-21T10:02:30Z'))).toISOString()).toBe('2026-11-21T10:07:00.000Z');
    expect(new Date(nextFireTime(spec, Date.parse('2026-11-21T10:07:00Z'))).toISOString()).toBe('2026-11-21T11:07:00.000Z');
    expect(new Date(nextFireTime(spec, Date.parse('2026-11-21T23:59:00Z'))).toISOString()).toBe('2026-11-22T00:07:00.000Z');
  });
});
