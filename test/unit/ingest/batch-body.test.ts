import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import {
  decodeBody,
  parseBatch,
  parseJson,
  SYNC_INFLATE_MAX_OUTPUT_BYTES,
  SYNC_INFLATE_MAX_RAW_BYTES,
} from '../../../functions/domain/ingest/batch-body';
import { EventApiError, type EventApiErrorCode, MAX_DECOMPRESSED_BYTES } from '../../../functions/domain/ingest/event-api';

async function codeOf(work: () => unknown): Promise<EventApiErrorCode | undefined> {
  try {
    await work();
  } catch (error) {
    if (error instanceof EventApiError) return error.code;
    throw error;
  }
  return undefined;
}

describe('body decoding', () => {
  const json = Buffer.from('{"events":[1],"sent_at_ms":1}');

  it('passes the bytes through when Content-Encoding is absent or identity', async () => {
    expect(await decodeBody(json, undefined)).toBe(json);
    expect(await decodeBody(json, ' Identity ')).toBe(json);
  });

  it('inflates gzip and x-gzip, whatever the case', async () => {
    expect((await decodeBody(gzipSync(json), 'gzip')).equals(json)).toBe(true);
    expect((await decodeBody(gzipSync(json), 'GZIP')).equals(json)).toBe(true);
    expect((await decodeBody(gzipSync(json), 'x-gzip')).equals(json)).toBe(true);
  });

  it.each(['br', 'deflate', 'compress', 'gzip, br', 'zstd'])(
    'refuses Content-Encoding %s with unsupported_content_encoding',
    async (encoding) => {
      expect(await codeOf(() => decodeBody(gzipSync(json), encoding))).toBe('unsupported_content_encoding');
    },
  );

  it('reports corrupt, truncated and non-gzip data as bad_gzip', async () => {
    const gz = gzipSync(Buffer.alloc(10_000, 'a'));
    const corrupt = Buffer.from(gz);
    corrupt[corrupt.length - 6] ^= 0xff;
    expect(await codeOf(() => decodeBody(corrupt, 'gzip'))).toBe('bad_gzip');
    expect(await codeOf(() => decodeBody(gz.subarray(0, gz.length - 4), 'gzip'))).toBe('bad_gzip');
    expect(await codeOf(() => decodeBody(json, 'gzip'))).toBe('bad_gzip');
  });

  it('inflates up to the cap and refuses one byte more with decompressed_too_large', async () => {
    expect((await decodeBody(gzipSync(Buffer.alloc(MAX_DECOMPRESSED_BYTES)), 'gzip')).length).toBe(MAX_DECOMPRESSED_BYTES);
    expect(await codeOf(() => decodeBody(gzipSync(Buffer.alloc(MAX_DECOMPRESSED_BYTES + 1)), 'gzip'))).toBe('decompressed_too_large');
  });

  it('inflates a small body that grows past the synchronous limit the same way, and holds a smaller cap', async () => {
    const small = gzipSync(Buffer.alloc(SYNC_INFLATE_MAX_OUTPUT_BYTES * 4, 'a'));
    expect(small.length).toBeLessThanOrEqual(SYNC_INFLATE_MAX_RAW_BYTES);
    expect((await decodeBody(small, 'gzip')).length).toBe(SYNC_INFLATE_MAX_OUTPUT_BYTES * 4);
    expect(await codeOf(() => decodeBody(gzipSync(Buffer.alloc(2000)), 'gzip', 1000))).toBe('decompressed_too_large');
    expect((await decodeBody(gzipSync(Buffer.alloc(1000)), 'gzip', 1000)).length).toBe(1000);
  });

  it('inflates a small body whatever its gzip trailer says it inflates to', async () => {
    // Several members: the trailer at the end is the last one's, one byte of forty thousand.
    const first = Buffer.alloc(40_000, 'a');
    const members = Buffer.concat([gzipSync(first), gzipSync('b')]);
    expect(members.length).toBeLessThanOrEqual(SYNC_INFLATE_MAX_RAW_BYTES);
    expect((await decodeBody(members, 'gzip')).equals(Buffer.concat([first, Buffer.from('b')]))).toBe(true);
    // Bytes after the member that claim 4 GiB are not gzip, whatever they claim.
    expect(await codeOf(() => decodeBody(Buffer.concat([gzipSync(json), Buffer.from([0xff, 0xff, 0xff, 0xff])]), 'gzip'))).toBe('bad_gzip');
    // A cap below zlib's smallest chunk still holds.
    expect((await decodeBody(gzipSync(Buffer.alloc(10)), 'gzip', 10)).length).toBe(10);
    expect(await codeOf(() => decodeBody(gzipSync(Buffer.alloc(11)), 'gzip', 10))).toBe('decompressed_too_large');
  });

  describe('bytes after the last gzip member', () => {
    // zlib stops at a zero byte after a member and ignores the rest (padding, it assumes); the
    // ingestion doc says anything after the last member that is not another member is bad_gzip.
    const member = gzipSync(json);
    const large = randomBytes(SYNC_INFLATE_MAX_RAW_BYTES * 2); // inflated off the event loop
    const small = Buffer.alloc(SYNC_INFLATE_MAX_OUTPUT_BYTES * 4, 'a'); // small as sent, past the synchronous output
    it.each([
      ['a zero byte and garbage', Buffer.from('\0garbage')],
      ['a zero byte', Buffer.alloc(1)],
      ['four zero bytes', Buffer.alloc(4)],
      ['garbage', Buffer.from('garbage')],
      ['the first byte of a gzip header', Buffer.from([0x1f])],
      ['a gzip header and nothing more', member.subarray(0, 10)],
    ])('refuses a member followed by %s with bad_gzip, small or large, before or after another member', async (_name, trailing) => {
      for (const body of [member, gzipSync(large), gzipSync(small), Buffer.concat([member, member])]) {
        expect(await codeOf(() => decodeBody(Buffer.concat([body, trailing]), 'gzip'))).toBe('bad_gzip');
      }
    });

    it('inflates two members, small and large, as one stream', async () => {
      expect((await decodeBody(Buffer.concat([member, member]), 'gzip')).equals(Buffer.concat([json, json]))).toBe(true);
      expect((await decodeBody(Buffer.concat([gzipSync(large), member]), 'gzip')).equals(Buffer.concat([large, json]))).toBe(true);
    });

    it('still refuses a bomb followed by garbage with decompressed_too_large', async () => {
      const bomb = gzipSync(Buffer.alloc(MAX_DECOMPRESSED_BYTES + 1), { level: 9 });
      expect(await codeOf(() => decodeBody(Buffer.concat([bomb, Buffer.from('\0garbage')]), 'gzip'))).toBe('decompressed_too_large');
    });
  });

  it('stops inflating a bomb at the cap instead of inflating it all', async () => {
    // 512 MiB of zeros in ~0.5 MB, then bytes that are not gzip: had zlib gone on past the cap to
    // the end, the answer would be bad_gzip. How fast it stops is a bench figure (gzip_bomb_refused_ms).
    const member = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const bomb = Buffer.concat([...Array.from({ length: 8 }, () => member), Buffer.from('not gzip')]);
    expect(await codeOf(() => decodeBody(bomb, 'gzip'))).toBe('decompressed_too_large');
    expect(await codeOf(() => decodeBody(Buffer.concat([gzipSync(Buffer.alloc(1000)), Buffer.from('not gzip')]), 'gzip'))).toBe('bad_gzip');
  });
});

describe('JSON parsing', () => {
  it('parses valid UTF-8 JSON', () => {
    expect(parseJson(Buffer.from('{"name":"ünï 🚀"}'))).toEqual({ name: 'ünï 🚀' });
  });

  it.each([
    ['a lone continuation byte', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d])],
    ['an encoded surrogate half', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])],
    ['an overlong encoding', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
    ['Latin-1 text', Buffer.from('{"a":"caf\xe9"}', 'latin1')],
  ])('refuses %s as bad_json', async (_name, bytes) => {
    expect(await codeOf(() => parseJson(bytes))).toBe('bad_json');
  });

  it.each(['', '{', '{"a":1,}', 'undefined', "{'a':1}"])('refuses %p as bad_json', async (text) => {
    expect(await codeOf(() => parseJson(Buffer.from(text)))).toBe('bad_json');
  });
});

describe('batch shape', () => {
  const events = [{}];

  it('takes an object with 1 to 1,000 events and an integer sent_at_ms', () => {
    expect(parseBatch({ events, sent_at_ms: 5, extra: true })).toEqual({ events, sent_at_ms: 5 });
    expect(parseBatch({ events: Array(1000).fill(0), sent_at_ms: 5 }).events).toHaveLength(1000);
  });

  it.each([
    ['an array', [{ events, sent_at_ms: 1 }]],
    ['null', null],
    ['a string', 'events'],
    ['no events', { sent_at_ms: 1 }],
    ['events as an object', { events: { 0: {} }, sent_at_ms: 1 }],
    ['no event', { events: [], sent_at_ms: 1 }],
    ['1,001 events', { events: Array(1001).fill({}), sent_at_ms: 1 }],
    ['no sent_at_ms', { events }],
    ['a fractional sent_at_ms', { events, sent_at_ms: 1.5 }],
    ['sent_at_ms as a string', { events, sent_at_ms: '1' }],
    ['an unsafe sent_at_ms', { events, sent_at_ms: 2 ** 60 }],
  ])('refuses %s as bad_batch_shape', async (_name, value) => {
    expect(await codeOf(() => parseBatch(value))).toBe('bad_batch_shape');
  });

  it.each([
    ['no events', { sent_at_ms: 1 }, 'events'],
    ['no event', { events: [], sent_at_ms: 1 }, 'events'],
    ['1,001 events', { events: Array(1001).fill({}), sent_at_ms: 1 }, 'events'],
    ['events as an object', { events: { 0: {} }, sent_at_ms: 1 }, 'events'],
    ['no events and no sent_at_ms (the first field checked)', {}, 'events'],
    ['no sent_at_ms', { events }, 'sent_at_ms'],
    ['sent_at_ms as a string', { events, sent_at_ms: '1' }, 'sent_at_ms'],
    ['an unsafe sent_at_ms', { events, sent_at_ms: 2 ** 60 }, 'sent_at_ms'],
    ['an array', [{ events, sent_at_ms: 1 }], undefined],
    ['null', null, undefined],
  ])('names the field at fault for %s', (_name, value, field) => {
    let refusal: unknown;
    try {
      parseBatch(value);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(EventApiError);
    expect(refusal).toMatchObject({ code: 'bad_batch_shape', field });
    expect((refusal as EventApiError).body()).toEqual(
      field === undefined ? { error: 'bad_batch_shape' } : { error: 'bad_batch_shape', field },
    );
  });
});
