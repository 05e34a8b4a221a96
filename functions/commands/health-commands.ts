import { z } from 'zod';
import type { HealthSources } from '../domain/health/operator-health';
import { operatorHealth } from '../domain/health/operator-health';
import { type AdminCommand, defineCommand, type Target } from './command';

/**
 * `health`: the operators' health view (docs/operations.md, "The health view"), read-only. The
 * console's Health page runs it every 30 s. Where it reads is the caller's: the console API's
 * function from its own environment (registry.ts, functions/adapters/health-sources.ts), the admin
 * CLI and the operator's console from the target (admin/health-sources.ts).
 */
export function healthCommand(sourcesOf: (target: Target) => HealthSources): AdminCommand {
  return defineCommand({
    name: 'health',
    usage: 'health   (ingestion per hour, aggregation lag, DLQs, postback failures, the probe, alarms; read-only)',
    flags: z.object({}),
    async execute(_flags, target) {
      return operatorHealth(sourcesOf(target), Date.now());
    },
  });
}
