import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startConsoleSite } from '../../local/console-site';

/** The processes whose environment names `dataDir` (the sign-in stand-in gets it in STAND_IN_SETTINGS). */
function processesNaming(dataDir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').includes(dataDir)) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

describe('the local console site stopped while it starts', () => {
  it('gives up at once, its sign-in stand-in killed, so the runtime can stop', async () => {
    // A stand-in that never got ready (one hung making its key) held the runtime's close() for ever:
    // close() waited for the console to start before closing it. Now it aborts the start.
    const dataDir = mkdtempSync(join(tmpdir(), 'console-site-stop-'));
    const stop = new AbortController();
    const registered: unknown[] = [];
    try {
      const starting = startConsoleSite({
        host: '127.0.0.1',
        port: 0,
        dataDir,
        baseUrl: 'http://127.0.0.1:9',
        invoke: async () => ({ statusCode: 500 }),
        register: (signIn) => registered.push(signIn),
        signal: stop.signal,
      });
      // The stand-in is spawned and loading (it takes a second or more to print its issuer).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(processesNaming(dataDir).length).toBe(1);
      const aborted = Date.now();
      stop.abort(new Error('the runtime stopped'));
      await expect(starting).rejects.toThrow('the runtime stopped');
      expect(Date.now() - aborted).toBeLessThan(2_000);
      const deadline = Date.now() + 5_000;
      while (processesNaming(dataDir).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(processesNaming(dataDir)).toEqual([]);
      expect(registered).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
