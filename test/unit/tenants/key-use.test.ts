import fc from 'fast-check';
import { KEY_USE_INTERVAL_MS, KeyUseRecorder, type KeyUseWriter, keyUseDue } from '../../../functions/domain/tenants/key-use';

const HOUR = KEY_USE_INTERVAL_MS;
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

/** The tenants table's conditional update, in memory: what recordServerKeyUse does to one item. */
class MemoryKeys implements KeyUseWriter {
  readonly stored = new Map<string, number>();
  attempts = 0;
  fail: Error | undefined;

  async recordServerKeyUse(keyHash: string, nowMs: number, intervalMs: number): Promise<boolean> {
    this.attempts += 1;
    if (this.fail) throw this.fail;
    const last = this.stored.get(keyHash);
    if (last !== undefined && !(last < nowMs - intervalMs)) return false;
    this.stored.set(keyHash, nowMs);
    return true;
  }
}

function world() {
  let now = T0;
  const writer = new MemoryKeys();
  const errors: unknown[] = [];
  const recorder = new KeyUseRecorder(
    writer,
    () => now,
    (error) => errors.push(error),
  );
  return {
    writer,
    errors,
    recorder,
    at: (ms: number) => {
      now = ms;
    },
  };
}

describe("a server key's last use", () => {
  it('is written at the first use, not again within the hour, and again once the hour is over', async () => {
    const { writer, recorder, at } = world();
    await recorder.note({ key_hash: 'k1' });
    expect(writer.stored.get('k1')).toBe(T0);
    expect(writer.attempts).toBe(1);

    at(T0 + 59 * 60_000);
    expect(recorder.note({ key_hash: 'k1' })).toBeUndefined();
    at(T0 + HOUR);
    expect(recorder.note({ key_hash: 'k1' })).toBeUndefined();
    expect(writer.attempts).toBe(1);

    at(T0 + HOUR + 1);
    await recorder.note({ key_hash: 'k1' });
    expect(writer.stored.get('k1')).toBe(T0 + HOUR + 1);
    expect(writer.attempts).toBe(2);
  });

  it("is not written when the key's item already holds a use within the hour (another instance wrote it)", async () => {
    const { writer, recorder, at } = world();
    at(T0 + 30 * 60_000);
    expect(recorder.note({ key_hash: 'k1', last_used_ms: T0 })).toBeUndefined();
    at(T0 + HOUR + 1);
    await recorder.note({ key_hash: 'k1', last_used_ms: T0 });
    expect(writer.attempts).toBe(1);
  });

  it('keeps each key to its own hour', async () => {
    const { writer, recorder, at } = world();
    await recorder.note({ key_hash: 'k1' });
    at(T0 + 10 * 60_000);
    await recorder.note({ key_hash: 'k2' });
    expect([...writer.stored]).toEqual([
      ['k1', T0],
      ['k2', T0 + 10 * 60_000],
    ]);
  });

  it('never throws when the write fails: the failure goes to the log, and the key is not tried again within the hour', async () => {
    const { writer, recorder, errors, at } = world();
    writer.fail = new Error('ProvisionedThroughputExceededException');
    await expect(recorder.note({ key_hash: 'k1' })).resolves.toBeUndefined();
    expect(errors).toEqual([writer.fail]);
    at(T0 + 5 * 60_000);
    expect(recorder.note({ key_hash: 'k1' })).toBeUndefined();
    writer.fail = undefined;
    at(T0 + HOUR + 1);
    await recorder.note({ key_hash: 'k1' });
    expect(writer.stored.get('k1')).toBe(T0 + HOUR + 1);
  });

  it('writes a key at most once an hour, and within an hour of every use, whatever the uses (two instances on one table)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 2 * HOUR }), instance: fc.integer({ min: 0, max: 1 }) }), {
          minLength: 1,
          maxLength: 40,
        }),
        async (uses) => {
          let now = T0;
          const table = new MemoryKeys();
          const writes: number[] = [];
          const writer: KeyUseWriter = {
            recordServerKeyUse: async (hash, ms, interval) => {
              const wrote = await table.recordServerKeyUse(hash, ms, interval);
              if (wrote) writes.push(ms);
              return wrote;
            },
          };
          const instances = [0, 1].map(() => new KeyUseRecorder(writer, () => now, fail));
          for (const use of uses) {
            now += use.gapMs;
            await instances[use.instance]?.note({ key_hash: 'k', last_used_ms: table.stored.get('k') });
            // Oracle: the stored last use is never more than an hour behind a use.
            expect(now - (table.stored.get('k') ?? Number.NEGATIVE_INFINITY)).toBeLessThanOrEqual(HOUR);
          }
          for (let i = 1; i < writes.length; i += 1) expect((writes[i] ?? 0) - (writes[i - 1] ?? 0)).toBeGreaterThan(HOUR);
        },
      ),
    );
  });

  it('is due with no use known, or one more than an hour ago', () => {
    expect(keyUseDue(undefined, T0)).toBe(true);
    expect(keyUseDue(T0 - HOUR, T0)).toBe(false);
    expect(keyUseDue(T0 - HOUR - 1, T0)).toBe(true);
  });
});

function fail(error: unknown): never {
  throw error;
}
