import type { RebuildStores } from '../../domain/aggregation/rebuild';
import { MemoryLedger, MemoryRowStore } from './aggregate-store';
import { MemoryInstallStore } from './install-store';

/** Fresh in-memory stores for one `admin rebuild`: it replays an app's audit objects into them. */
export const memoryRebuildStores = (): RebuildStores => ({
  installs: new MemoryInstallStore(),
  rows: new MemoryRowStore(),
  ledger: new MemoryLedger(),
});
