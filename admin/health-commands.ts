import { healthCommand } from '../functions/commands/health-commands';
import { healthSources } from './health-sources';

/** `admin health` (functions/commands/health-commands.ts) on the target's sources: the local runtime, or a stack by its outputs. */
export const adminHealthCommand = healthCommand(healthSources);
