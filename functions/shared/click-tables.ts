import type { ClickTables } from '../adapters/click-store';
import { resourceName } from './config';

/** The click log and the old clicks table it falls back to, from the function's environment (both granted together, lib/manifest.ts). */
export const clickTables = (): ClickTables => ({ log: resourceName.table('click_log'), legacy: resourceName.table('clicks') });
