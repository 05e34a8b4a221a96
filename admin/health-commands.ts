import { healthCommands } from '../functions/commands/health-commands';
import { healthSources } from './health-sources';

/** `admin health` and `admin status` (functions/commands/health-commands.ts) on the target's sources: the local runtime, or a stack by its outputs. */
export const adminHealthCommands = healthCommands(healthSources);
