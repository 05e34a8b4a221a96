import { constants, createGunzip, createGzip, type Gunzip, type Gzip, gunzipSync, gzipSync } from 'node:zlib';

/**
 * Gzip and gunzip in one synchronous call on a zlib engine kept for the life of the process and
 * reset between calls, instead of the new one `gzipSync` and `gunzipSync` make and close every
 * time: a Transform stream, then zlib's state allocated (about 270 KB for deflate) and freed. On
 * the ingest path that setup is per request, not per byte, and a kept state also stays in the
 * CPU's cache from one batch to the next (docs/ingestion.md, "Kept zlib engines", has the figures).
 *
 * Node has no public call for running a kept engine synchronously, so this drives the engine's
 * handle the way `gzipSync` itself does (zlib.js' `processChunkSync`: `_handle.writeSync` with
 * Z_FINISH, then `_writeState` for what is left of the output and the input). Where a Node has
 * not those internals, every call is `gzipSync` or `gunzipSync`: the same bytes, the same
 * errors, only slower (a unit test holds that the kept engine is used on this Node).
 *
 * Synchronous calls run one at a time, so a process that serves requests concurrently (the local
 * runtime) shares each engine safely; every result is a slice of a slab that is never written again (Slab).
 */

interface EngineHandle {
  reset(): void;
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
}

/** What a zlib stream keeps in fields Node does not document. */
interface EngineInternals {
  readonly _handle?: EngineHandle | null;
  /** After a write: what is left of the output room, then of the input. */
  readonly _writeState?: Uint32Array;
}

type Engine = (Gzip | Gunzip) & EngineInternals;

// Not `instanceof Uint32Array`: Node's own realm makes the array, and a test runner's realm has another class.
const usable = (engine: Engine) =>
  typeof engine._handle?.writeSync === 'function' && Object.prototype.toString.call(engine._writeState) === '[object Uint32Array]';

/** Whether this Node's zlib streams can be driven as kept engines (else every call falls back). */
export const keptZlibAvailable = (() => {
  const probe: Engine = createGzip();
  const available = usable(probe);
  probe.close();
  return available;
})();

/** The output left room and the input left unread after a run to the end of the input. */
interface Run {
  readonly outLeft: number;
  readonly inLeft: number;
}

class KeptEngine {
  private engine: Engine | undefined;

  constructor(private readonly make: () => Gzip | Gunzip) {}

  /** The whole input through a freshly reset engine into out[outStart, outStart + outLength). Throws zlib's error; the engine is then made anew. */
  run(input: Uint8Array, out: Uint8Array, outStart: number, outLength: number): Run {
    const engine = this.engine ?? this.fresh();
    const handle = engine._handle;
    const state = engine._writeState;
    if (!handle || !state) throw new Error('the kept zlib engine has no handle');
    handle.reset();
    handle.writeSync(constants.Z_FINISH, input, 0, input.length, out, outStart, outLength);
    // zlib's error destroys the stream (its handle closed) there and then, the error kept on it.
    if (engine.destroyed) {
      this.engine = undefined;
      throw engine.errored ?? new Error('zlib failed');
    }
    return { outLeft: state[0] ?? 0, inLeft: state[1] ?? 0 };
  }

  private fresh(): Engine {
    const engine: Engine = this.make();
    // The stream emits the error it was destroyed with on the next tick: run() has thrown it already.
    engine.on('error', () => undefined);
    this.engine = engine;
    return engine;
  }
}

/**
 * Where the engines write their results: slices of a slab handed out one after another and never
 * written again, so a result is its own bytes with neither a buffer allocated for it nor a copy
 * out of a kept one (Node's pool does the same for small buffers). The engine writes straight into
 * the slab's free room; what it wrote is kept, the rest of the room stays free. A slab is freed
 * once no result in it is referenced, so a result kept for long would keep its slab (1 MiB): the
 * results here are a request's body and audit object.
 */
class Slab {
  private slab: Buffer = Buffer.alloc(0);
  private used = 0;

  /** The slab and where its free room of at least `room` bytes starts (a new slab when this one has less). */
  free(room: number): number {
    if (this.slab.length - this.used < room) {
      this.slab = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, room));
      this.used = 0;
    }
    return this.used;
  }

  get buffer(): Buffer {
    return this.slab;
  }

  /** The `length` bytes written from the free room's start, kept: the room after them (8-byte aligned) is free. */
  keep(length: number): Buffer {
    const kept = this.slab.subarray(this.used, this.used + length);
    this.used = Math.min(this.slab.length, (this.used + length + 7) & ~7);
    return kept;
  }
}

const SLAB_BYTES = 1024 * 1024;
const slab = new Slab();

/** Gzip output room for any input up to `maxInput` bytes: deflate's stored blocks at worst, a header and a trailer. */
const gzipRoom = (maxInput: number) => maxInput + Math.ceil(maxInput / 16_384) * 5 + 1024;

/**
 * Gzip at one level: `gzip(input)` is the bytes `gzipSync(input, { level })` gives (the same zlib,
 * the same parameters). An input over `maxInput` bytes is handed to gzipSync.
 */
export function keptGzip(level: number, maxInput: number): (input: Uint8Array) => Buffer {
  const engine = new KeptEngine(() => createGzip({ level }));
  return (input) => {
    if (!keptZlibAvailable || input.length > maxInput) return gzipSync(input, { level });
    const room = gzipRoom(input.length);
    const start = slab.free(room);
    const { outLeft } = engine.run(input, slab.buffer, start, room);
    // Room left means deflate finished; none (never, by the room given) and it is done again the usual way.
    if (outLeft === 0) return gzipSync(input, { level });
    return slab.keep(room - outLeft);
  };
}

/** What gunzip inflated, and how many bytes of the input it read (as `gunzipSync` with `info: true` says). */
export interface Gunzipped {
  readonly buffer: Buffer;
  readonly bytesRead: number;
}

/**
 * Gunzip with at most `maxOutput` bytes out, up to `limit` (`gunzipSync` with `maxOutputLength`
 * and `info: true`): member after member while the next byte could start one; an output past
 * `maxOutput` throws ERR_BUFFER_TOO_LARGE, as Node's does, and corrupt or truncated data zlib's error.
 */
export function keptGunzip(limit: number): (input: Uint8Array, maxOutput: number) => Gunzipped {
  const engine = new KeptEngine(() => createGunzip());
  return (input, maxOutput) => {
    if (!keptZlibAvailable || maxOutput > limit) {
      const { buffer, engine: used } = gunzipSync(input, { maxOutputLength: maxOutput, info: true }) as unknown as {
        buffer: Buffer;
        engine: { bytesWritten: number };
      };
      return { buffer, bytesRead: used.bytesWritten };
    }
    // A gzip member ends with its size (mod 2^32): a body of one member is inflated into room of
    // that size and one byte more, which is all it takes of the slab. Room left over means the
    // engine stopped for the input's end or an error, as it would have with more room; none
    // (another member, a size that lies), or an error, and it is inflated into the cap's room.
    const size = input.length >= GZIP_MEMBER_MIN_BYTES ? sizeOf(input) : -1;
    if (size >= 0 && size < maxOutput) {
      try {
        const start = slab.free(size + 1);
        const { outLeft, inLeft } = engine.run(input, slab.buffer, start, size + 1);
        if (outLeft === 1) return { buffer: slab.keep(size), bytesRead: input.length - inLeft };
      } catch {
        // The cap's room below gives the error its caller expects.
      }
    }
    // One byte more than the cap: output that fills the room is past the cap.
    const start = slab.free(maxOutput + 1);
    const { outLeft, inLeft } = engine.run(input, slab.buffer, start, maxOutput + 1);
    if (outLeft === 0) throw tooLarge(maxOutput);
    return { buffer: slab.keep(maxOutput + 1 - outLeft), bytesRead: input.length - inLeft };
  };
}

/** A gzip member's header (10 bytes) and trailer (CRC-32, then the size): no member is shorter, with its deflate data. */
const GZIP_MEMBER_MIN_BYTES = 18;

/** The size a gzip member's trailer gives (ISIZE, little-endian in the last four bytes). */
const sizeOf = (input: Uint8Array): number => {
  const end = input.length;
  return ((input[end - 4] ?? 0) | ((input[end - 3] ?? 0) << 8) | ((input[end - 2] ?? 0) << 16)) + (input[end - 1] ?? 0) * 0x1000000;
};

/** Node's own error for an output past maxOutputLength. */
const tooLarge = (maxOutput: number) =>
  Object.assign(new RangeError(`Cannot create a Buffer larger than ${maxOutput} bytes`), { code: 'ERR_BUFFER_TOO_LARGE' });
