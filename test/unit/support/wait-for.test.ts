import { waitFor } from '../../support/wait-for';

describe('waitFor, the integration tests’ poll', () => {
  it('returns as soon as the condition holds, having looked once per interval', async () => {
    let looks = 0;
    const started = Date.now();
    await waitFor(() => ++looks === 3, { timeoutMs: 5_000, intervalMs: 10 });
    expect(looks).toBe(3);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('awaits an asynchronous condition', async () => {
    let looks = 0;
    await waitFor(async () => ++looks >= 2, { timeoutMs: 5_000, intervalMs: 1 });
    expect(looks).toBe(2);
  });

  it('throws after the timeout, naming what it waited for', async () => {
    const started = Date.now();
    await expect(waitFor(() => false, { timeoutMs: 50, intervalMs: 10, what: 'the postback' })).rejects.toThrow(
      'timed out after 50 ms waiting for the postback',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });
});
