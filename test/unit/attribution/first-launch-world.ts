import { FirstLaunchAnswers } from '../../../functions/adapters/first-launch-store';
import {
  answerFirstLaunch,
  type FirstLaunchPorts,
  type FirstLaunchRequest,
  parseFirstLaunch,
} from '../../../functions/domain/attribution/first-launch';
import { APP, T0, world } from '../aggregation/world';

export const UUID = '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f';
export const IP = '198.51.100.7';
export const BODY = { install_uuid: UUID, platform: 'android', app_version: '1.4.0', sdk_version: 'android/0.3.0' };

/** Lets `ticks` other promise callbacks run first: how a race between two callers is drawn in memory. */
async function yieldTo(ticks: number): Promise<void> {
  for (let i = 0; i < ticks; i++) await Promise.resolve();
}

/**
 * The first-launch ports over an aggregation world: its clicks, and the answers kept in its
 * installs table, which the aggregator reads too. `storeTicks` holds each of the first launch's
 * reads and keeps back by that many ticks, so a race with a count can land its keep before,
 * between or after the aggregator's read and keep (`ports` stays the aggregator's). `ask` makes a first launch of BODY, from IP,
 * at T0 unless told otherwise.
 */
export function firstLaunchWorld(options: { probabilistic?: boolean; storeTicks?: number } = {}) {
  const w = world(options);
  const stored = new FirstLaunchAnswers(w.installs);
  const ticks = options.storeTicks ?? 0;
  const answers: FirstLaunchPorts['answers'] = {
    first: async (appId, uuid) => {
      await yieldTo(ticks);
      return stored.first(appId, uuid);
    },
    keep: async (record) => {
      await yieldTo(ticks);
      return stored.keep(record);
    },
    counted: (appId, uuid) => stored.counted(appId, uuid),
  };
  const launchPorts: FirstLaunchPorts = { clicks: w.lookups, answers };
  const ask = (request: Partial<FirstLaunchRequest> = {}, call: { ip?: string; atMs?: number } = {}) =>
    answerFirstLaunch(launchPorts, {
      appId: APP,
      probabilistic: options.probabilistic ?? false,
      clientIp: call.ip ?? IP,
      receivedMs: call.atMs ?? T0,
      request: { ...parseFirstLaunch(BODY), ...request },
    });
  return { ...w, launchPorts, ask };
}
