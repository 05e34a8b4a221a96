import { pool } from '../../../functions/domain/common/pool';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('pool', () => {
  it('runs every item, in order of start, never more than the limit at a time', async () => {
    const started: number[] = [];
    let running = 0;
    let most = 0;
    await pool([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      started.push(item);
      running++;
      most = Math.max(most, running);
      await tick();
      running--;
    });
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('does nothing for no items', async () => {
    const work = jest.fn(async () => undefined);
    await pool([], 4, work);
    expect(work).not.toHaveBeenCalled();
  });

  it('starts nothing after a failure and throws the first one once the running items have settled', async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const run = pool([1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      if (item === 1) throw new Error('first');
      await tick();
      await tick();
      settled.push(item);
    });
    await expect(run).rejects.toThrow('first');
    expect(started).toEqual([1, 2]);
    expect(settled).toEqual([2]);
  });
});
