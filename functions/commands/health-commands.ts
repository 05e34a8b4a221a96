import { z } from 'zod';
import type { HealthSources } from '../domain/health/operator-health';
import { operatorHealth, serviceStatus } from '../domain/health/operator-health';
import { type AdminCommand, defineCommand, type Target } from './command';

/**
 * `health`: the operators' health view (docs/operations.md, "The health view"), read-only. The
 * console's Health page runs it every 30 s. Where it reads is the caller's: the console API's
 * function from its own environment (registry.ts, functions/adapters/health-sources.ts), the admin
 * CLI and the operator's console from the target (admin/health-sources.ts).
 */
export function healthCommands(sourcesOf: (target: Target) => HealthSources): readonly AdminCommand[] {
  return [healthCommand(sourcesOf), healthStatusCommand(sourcesOf)];
}

function healthCommand(sourcesOf: (target: Target) => HealthSources): AdminCommand {
  return defineCommand({
    name: 'health',
    usage: 'health   (ingestion per hour, aggregation lag, DLQs, postback failures, the probe, alarms; read-only)',
    flags: z.object({}),
    async execute(_flags, target) {
      return operatorHealth(sourcesOf(target), Date.now());
    },
  });
}

/**
 * `status`: the health view's verdict and its problems alone, for every member of the
 * deployed console ("is anything broken?", asked from the landing page), read from the queues,
 * the probe and the alarms only (serviceStatus). The problems name the service's parts, never a
 * company, app or partner, and no volumes: what `health` adds (events per hour, postback
 * failures by partner) sums every company's, and stays the operators'.
 */
function healthStatusCommand(sourcesOf: (target: Target) => HealthSources): AdminCommand {
  return defineCommand({
    name: 'status',
    usage: "status   (the health view's verdict and problems only; read-only)",
    flags: z.object({}),
    async execute(_flags, target) {
      return serviceStatus(sourcesOf(target), Date.now());
    },
  });
}
