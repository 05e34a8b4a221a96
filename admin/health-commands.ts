import { z } from 'zod';
import { defineCommand } from '../functions/commands/command';
import { operatorHealth } from '../functions/domain/health/operator-health';
import { healthSources } from './health-sources';

/**
 * `admin health`: the operators' health view (docs/operations.md, "The health view"), read-only.
 * The console's Health page runs it every 30 s.
 */
export const healthCommands = [
  defineCommand({
    name: 'health',
    usage: 'health   (ingestion per hour, aggregation lag, DLQs, postback failures, the probe, alarms; read-only)',
    flags: z.object({}),
    async execute(_flags, target) {
      return operatorHealth(healthSources(target), Date.now());
    },
  }),
];
