import { gunzip, type InputType, type ZlibOptions } from 'node:zlib';
import { isPlainObject, parseStrictJson } from '../common/json';
import { EventApiError, MAX_DECOMPRESSED_BYTES, MAX_EVENTS_PER_BATCH } from './event-api';

/**
 * From the authenticated raw bytes to a batch: Content-Encoding, inflate, strict UTF-8 JSON and
 * the batch shape, each failure its documented code. Shared by POST /event and
 * POST /privacy/delete (which stops after the JSON).
 */

const inflate = (input: InputType, options: ZlibOptions) =>
  new Promise<Buffer>((resolve, reject) => gunzip(input, options, (error, result) => (error ? reject(error) : resolve(result))));

/**
 * Absent or identity: the bytes as they are; gzip: inflated; anything else 415. Inflating runs
 * in zlib's thread pool, 64 KiB at a time, and stops the moment the output passes the cap
 * (maxOutputLength), so a gzip bomb costs at most the cap in memory and a few milliseconds.
 */
export async function decodeBody(raw: Buffer, contentEncoding: string | undefined, maxBytes = MAX_DECOMPRESSED_BYTES): Promise<Buffer> {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return raw;
  if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new EventApiError('unsupported_content_encoding');
  try {
    return await inflate(raw, { maxOutputLength: maxBytes, chunkSize: 64 * 1024 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new EventApiError('decompressed_too_large');
    throw new EventApiError('bad_gzip');
  }
}


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

/** An object with events (1 to 1,000 entries of any kind; entries are judged one by one later) and an integer sent_at_ms. */
export function parseBatch(value: unknown): EventBatch {
  if (!isPlainObject(value)) throw new EventApiError('bad_batch_shape');
  const { events, sent_at_ms } = value;
  if (!Array.isArray(events) || events.length < 1 || events.length > MAX_EVENTS_PER_BATCH) throw new EventApiError('bad_batch_shape');
  if (!Number.isSafeInteger(sent_at_ms)) throw new EventApiError('bad_batch_shape');
  return { events, sent_at_ms: sent_at_ms as number };
}
