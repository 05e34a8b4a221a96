import { TtlCache } from '../../../functions/shared/ttl-cache';

describe('the look-up cache', () => {
  it('serves a value until it expires, then loads it again', async () => {
    let now = 0;
    const cache = new TtlCache<number>(1000, 10, () => now);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.getOrLoad('k', load)).toBe(1);
    now = 999;
    expect(await cache.getOrLoad('k', load)).toBe(1);
    now = 1000;
    expect(await cache.getOrLoad('k', load)).toBe(2);
  });

  it('keeps a value for the lifetime ttlFor gives it', async () => {
    let now = 0;
    const cache = new TtlCache<number | undefined>(1000, 10, () => now);
    let loads = 0;
    const miss = async () => {
      loads++;
      return undefined;
    };
    await cache.getOrLoad('k', miss, (v) => (v === undefined ? 10 : 1000));
    now = 11;
    await cache.getOrLoad('k', miss, (v) => (v === undefined ? 10 : 1000));
    expect(loads).toBe(2);
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const cache = new TtlCache<string>(60_000, 2);
    let loads = 0;
    const load = (v: string) => async () => {
      loads++;
      return v;
    };
    await cache.getOrLoad('a', load('a'));
    await cache.getOrLoad('b', load('b'));
    await cache.getOrLoad('c', load('c'));
    await cache.getOrLoad('b', load('b'));
    expect(loads).toBe(3);
    await cache.getOrLoad('a', load('a'));
    expect(loads).toBe(4);
  });
});
