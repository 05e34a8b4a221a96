import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { keptGunzip, keptGzip, keptZlibAvailable } from '../../../functions/domain/common/kept-zlib';

/** What gunzipSync says of an input: its bytes and how much it read, or that it was too large, or zlib's error. */
function oracle(input: Uint8Array, maxOutput: number): string {
  try {
    // One output chunk the size of the kept engine's room: zlib stops where the kept engine stops.
    const { buffer, engine } = gunzipSync(input, { maxOutputLength: maxOutput, chunkSize: maxOutput + 1, info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    return `${buffer.toString('hex')} read ${engine.bytesWritten}`;
  } catch (error) {
    return outcomeOfError(error);
  }
}

const outcomeOfError = (error: unknown) =>
  (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? 'too large' : `zlib error ${(error as NodeJS.ErrnoException).code}`;

function kept(gunzip: ReturnType<typeof keptGunzip>, input: Uint8Array, maxOutput: number): string {
  try {
    const { buffer, bytesRead } = gunzip(input, maxOutput);
    return `${buffer.toString('hex')} read ${bytesRead}`;
  } catch (error) {
    return outcomeOfError(error);
  }
}

/** Text a little like JSON lines: repetitive, so that deflate finds matches, with random runs between. */
const payload = fc
  .array(fc.oneof(fc.constantFrom('{"event_name":"level_up",', '"ts_ms":1732900000000}', '\n', '0123456789abcdef'), fc.string()), {
    maxLength: 400,
  })
  .map((pieces) => Buffer.from(pieces.join('')));

describe('kept zlib engines', () => {
  it('drives a kept engine on this Node (the ingest path does not fall back to a new engine per call)', () => {
    expect(keptZlibAvailable).toBe(true);
  });

  it('gzips to the very bytes gzipSync gives at the same level, call after call', () => {
    const gzip = keptGzip(1, 64 * 1024);
    fc.assert(
      fc.property(fc.oneof(payload, fc.uint8Array({ maxLength: 5000 })), (input) => {
        expect(gzip(input).equals(gzipSync(input, { level: 1 }))).toBe(true);
      }),
      { numRuns: 300 },
    );
    // Past its room: gzipSync's own output, then the engine again.
    const large = randomBytes(64 * 1024 + 1);
    expect(gzip(large).equals(gzipSync(large, { level: 1 }))).toBe(true);
    expect(gunzipSync(gzip(Buffer.from('again'))).toString()).toBe('again');
  });

  it('returns a copy: a later call does not change what an earlier one returned', () => {
    const gzip = keptGzip(1, 1024);
    const first = gzip(Buffer.from('first'));
    const snapshot = Buffer.from(first);
    gzip(Buffer.from('second, and longer than the first'));
    expect(first.equals(snapshot)).toBe(true);
    const gunzip = keptGunzip(1024);
    const inflated = gunzip(gzipSync('first'), 1024).buffer;
    gunzip(gzipSync('other'), 1024);
    expect(inflated.toString()).toBe('first');
  });

  it('gunzips as gunzipSync does: the bytes and how much was read, too large, or zlib error, whatever was done to the gzip', () => {
    const gunzip = keptGunzip(70_000);
    const damaged = fc
      .record({
        members: fc.array(payload, { minLength: 1, maxLength: 3 }),
        damage: fc.oneof(
          fc.constant({ kind: 'none' as const }),
          fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bits: fc.integer({ min: 1, max: 255 }) }),
          fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
          fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 12 }) }),
        ),
      })
      .map(({ members, damage }) => {
        const gz = Buffer.concat(members.map((member) => gzipSync(member)));
        if (damage.kind === 'flip') gz[damage.at % gz.length] ^= damage.bits;
        if (damage.kind === 'truncate') return gz.subarray(0, damage.at % gz.length);
        if (damage.kind === 'append') return Buffer.concat([gz, damage.bytes]);
        return gz;
      });
    fc.assert(
      fc.property(damaged, fc.integer({ min: 63, max: 70_000 }), (input, maxOutput) => {
        expect(kept(gunzip, input, maxOutput)).toBe(oracle(input, maxOutput));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps every result as it was, call after call and slab after slab, and reads a size that lies as gunzipSync does', () => {
    const gzip = keptGzip(1, 64 * 1024);
    const gunzip = keptGunzip(70_000);
    const results: [Buffer, string][] = [];
    // Enough calls to fill several slabs: each result must still hold its own bytes at the end.
    for (let i = 0; i < 400; i++) {
      const body = Buffer.from(`{"events":[${'{"i":1},'.repeat(i % 30)}${i}]}`.repeat(1 + (i % 100)));
      results.push([gzip(body), gzipSync(body, { level: 1 }).toString('hex')]);
      results.push([gunzip(gzipSync(body), 70_000).buffer, body.toString('hex')]);
    }
    for (const [result, expected] of results) expect(result.toString('hex')).toBe(expected);
    const body = Buffer.from('{"events":[]}'.repeat(100));
    for (const size of [0, body.length - 1, body.length + 1, 70_000, 70_001, 0xffffffff]) {
      const lying = Buffer.from(gzipSync(body));
      lying.writeUInt32LE(size, lying.length - 4);
      expect(kept(gunzip, lying, 70_000)).toBe(oracle(lying, 70_000));
    }
  });

  it("falls back to Node's one-shot calls, with the same answers, where zlib's streams lack the internals it drives", () => {
    // A Node whose streams have no handle to drive: every call is gzipSync or gunzipSync.
    const actual = jest.requireActual<typeof import('node:zlib')>('node:zlib');
    jest.isolateModules(() => {
      jest.doMock('node:zlib', () => ({
        ...actual,
        createGzip: () => Object.assign(actual.createGzip(), { _handle: null }),
        createGunzip: () => Object.assign(actual.createGunzip(), { _handle: null }),
      }));
      const fallback = require('../../../functions/domain/common/kept-zlib') as typeof import('../../../functions/domain/common/kept-zlib');
      expect(fallback.keptZlibAvailable).toBe(false);
      const gzip = fallback.keptGzip(1, 64 * 1024);
      const gunzip = fallback.keptGunzip(70_000);
      for (const body of [Buffer.alloc(0), Buffer.from('{"events":[]}'.repeat(300)), randomBytes(5000)]) {
        expect(gzip(body).equals(gzipSync(body, { level: 1 }))).toBe(true);
        const zipped = gzipSync(body);
        expect(kept(gunzip, zipped, 70_000)).toBe(oracle(zipped, 70_000));
        expect(kept(gunzip, zipped, 63)).toBe(oracle(zipped, 63));
        expect(kept(gunzip, zipped.subarray(0, zipped.length - 3), 70_000)).toBe(oracle(zipped.subarray(0, zipped.length - 3), 70_000));
      }
    });
    jest.dontMock('node:zlib');
  });

  it('refuses one byte past the cap, and goes on after an error with a new engine', () => {
    const gunzip = keptGunzip(1000);
    expect(gunzip(gzipSync(Buffer.alloc(1000)), 1000).buffer.length).toBe(1000);
    expect(kept(gunzip, gzipSync(Buffer.alloc(1001)), 1000)).toBe('too large');
    expect(kept(gunzip, gzipSync(Buffer.alloc(11)), 10)).toBe('too large');
    expect(kept(gunzip, Buffer.from('not gzip at all'), 1000)).toBe('zlib error Z_DATA_ERROR');
    expect(gunzip(gzipSync('after'), 1000).buffer.toString()).toBe('after');
    // A cap above the engine's room is gunzipSync's.
    expect(gunzip(gzipSync(Buffer.alloc(5000)), 5000).buffer.length).toBe(5000);
  });
});
