/**
 * Polls a condition until it holds, so a test waits as long as the work takes and no longer: a
 * fixed sleep is either too short on a loaded machine (a flaky test) or too long on a quiet one
 * (CI time, CONTRIBUTING.md "The CI budget"). Throws after timeoutMs, naming what it waited for.
 * A sleep that is about time passing (a cache running out, an outage lasting, nothing arriving
 * for a while) stays a sleep, with a comment saying so.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs, intervalMs = 100, what = 'the condition' }: { timeoutMs: number; intervalMs?: number; what?: string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
