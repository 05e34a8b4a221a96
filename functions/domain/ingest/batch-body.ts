import { gunzip, type InputType, type ZlibOptions } from 'node:zlib';
import { isPlainObject, parseStrictJson } from '../common/json';
import { type Gunzipped, keptGunzip } from '../common/kept-zlib';
import { EventApiError, MAX_DECOMPRESSED_BYTES, MAX_EVENTS_PER_BATCH } from './event-api';

/**
 * From the authenticated raw bytes to a batch: Content-Encoding, inflate, strict UTF-8 JSON and
 * the batch shape, each failure its documented code. Shared by POST /event and
 * POST /privacy/delete (which stops after the JSON).
 */

const inflate = (input: InputType, options: ZlibOptions) =>
  new Promise<Gunzipped>((resolve, reject) =>
    gunzip(input, { ...options, info: true }, (error, result) => {
      if (error) return reject(error);
      const { buffer, engine } = result as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
      resolve({ buffer, bytesRead: engine.bytesWritten });
    }),
  );

/**
 * The inflated bytes, when zlib read the whole body. Node inflates member after member while the
 * next byte could start one, but stops at a zero byte after a member and ignores the rest (taking
 * it for padding) without an error: anything after the last member is bad_gzip.
 */
function wholeBody(raw: Buffer, inflated: Gunzipped): Buffer {
  if (inflated.bytesRead !== raw.length) throw new EventApiError('bad_gzip');
  return inflated.buffer;
}

/**
 * A small body (up to 16 KiB as sent, a batch of a hundred-odd events) is first inflated
 * synchronously with its output held to 128 KiB: that blocks the event loop only briefly, and
 * skips the thread-pool round trip, which costs more than inflating the batch (docs/ingestion.md,
 * "Inflating", has the figures). It is inflated by a zlib engine kept from one request to the next
 * (common/kept-zlib.ts) into one buffer, not a new engine per request.
 * A body that inflates past that goes the way of a large one.
 */
export const SYNC_INFLATE_MAX_RAW_BYTES = 16 * 1024;
export const SYNC_INFLATE_MAX_OUTPUT_BYTES = 128 * 1024;
const inflateSync = keptGunzip(SYNC_INFLATE_MAX_OUTPUT_BYTES);

/**
 * Absent or identity: the bytes as they are; gzip: inflated; anything else 415. A large body is
 * inflated in zlib's thread pool, 64 KiB at a time, and zlib stops the moment the output passes
 * the cap (maxOutputLength), so a gzip bomb costs at most the cap in memory and a few milliseconds.
 * Concatenated members are one stream; any byte after the last member, zero or not, is bad_gzip.
 */
export async function decodeBody(raw: Buffer, contentEncoding: string | undefined, maxBytes = MAX_DECOMPRESSED_BYTES): Promise<Buffer> {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return raw;
  if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new EventApiError('unsupported_content_encoding');
  try {
    if (raw.length <= SYNC_INFLATE_MAX_RAW_BYTES) {
      const syncCap = Math.min(maxBytes, SYNC_INFLATE_MAX_OUTPUT_BYTES);
      try {
        return wholeBody(raw, inflateSync(raw, syncCap));
      } catch (error) {
        // Past the small cap: the whole cap is the thread pool's business, unless it was the whole cap.
        if (!tooLarge(error) || syncCap === maxBytes) throw error;
      }
    }
    return wholeBody(raw, await inflate(raw, { maxOutputLength: maxBytes, chunkSize: 64 * 1024 }));
  } catch (error) {
    if (tooLarge(error)) throw new EventApiError('decompressed_too_large');
    throw new EventApiError('bad_gzip');
  }
}

const tooLarge = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';

/** JSON from bytes that must be valid UTF-8: a lone surrogate or overlong sequence is bad_json too. */
export function parseJson(bytes: Uint8Array): unknown {
  try {
    return parseStrictJson(bytes);
  } catch {
    throw new EventApiError('bad_json');
  }
}

export interface EventBatch {
  readonly events: readonly unknown[];
  readonly sent_at_ms: number;
}

/**
 * An object with events (1 to 1,000 entries of any kind; entries are judged one by one later) and
 * an integer sent_at_ms. A refusal names the first of the two at fault (BATCH_FIELDS' order); a
 * body that is not an object names none. A sent_at_ms in seconds is an integer and passes here:
 * its events' bad_timestamp names it instead (event-validation.ts).
 */
export function parseBatch(value: unknown): EventBatch {
  if (!isPlainObject(value)) throw new EventApiError('bad_batch_shape');
  const { events, sent_at_ms } = value;
  if (!Array.isArray(events) || events.length < 1 || events.length > MAX_EVENTS_PER_BATCH)
    throw new EventApiError('bad_batch_shape', 'events');
  if (!Number.isSafeInteger(sent_at_ms)) throw new EventApiError('bad_batch_shape', 'sent_at_ms');
  return { events, sent_at_ms: sent_at_ms as number };
}
