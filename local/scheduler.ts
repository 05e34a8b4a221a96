import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import { type ScheduleSpec, schedules } from '../lib/manifest';
import { invoke } from './lambda';

/** Plays EventBridge: fires each schedule of the manifest on its rate, its minute of every hour or its daily time (UTC). */
export interface Scheduler {
  run(name: string): Promise<unknown>;
  stop(): void;
}

export function nextFireTime(spec: ScheduleSpec, from: number): number {
  if (spec.kind === 'rate') {
    const period = spec.minutes * 60_000;
    return Math.floor(from / period) * period + period;
  }
  if (spec.kind === 'hourly') {
    const candidate = Math.floor(from / 3_600_000) * 3_600_000 + spec.minuteUtc * 60_000;
    return candidate > from ? candidate : candidate + 3_600_000;
  }
  const day = new Date(from);
  const candidate = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), spec.hourUtc, spec.minuteUtc);
  return candidate > from ? candidate : candidate + 86_400_000;
}

/**
 * `armed`: fire each schedule on its own time (npm start). Unarmed, a schedule runs only when
 * asked (`run`, the control port's `POST /schedules/<name>`): the tests' stacks, whose writes and
 * injected faults a lane sweep or a health check firing at a minute's turn would interleave with.
 */
export function startScheduler(onError: (error: unknown) => void, armed = true): Scheduler {
  const timers = new Map<string, NodeJS.Timeout>();
  const all = schedules as Record<string, ScheduleSpec>;

  const run = async (name: string) => {
    const spec = all[name];
    if (!spec) throw new Error(`no schedule named ${name}; known: ${Object.keys(all).join(', ')}`);
    const event: ScheduledEvent = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date().toISOString(),
      region: 'us-east-1',
      resources: [`arn:aws:events:us-east-1:000000000000:rule/${name}`],
      detail: {},
    };
    return invoke(spec.function, event);
  };

  const arm = (name: string, spec: ScheduleSpec) => {
    const delay = nextFireTime(spec, Date.now()) - Date.now();
    const timer = setTimeout(() => {
      run(name)
        .catch(onError)
        .finally(() => arm(name, spec));
    }, delay);
    timer.unref();
    timers.set(name, timer);
  };
  if (armed) for (const [name, spec] of Object.entries(all)) arm(name, spec);

  return {
    run,
    stop: () => {
      for (const timer of timers.values()) clearTimeout(timer);
    },
  };
}
