import fc from 'fast-check';
import type { ServiceError } from '../../../functions/domain/common/errors';
import {
  answerStream,
  decodeCursor,
  encodeCursor,
  LIST_MAX_KEYS,
  MAX_PAGE_EVENT_BYTES,
  parseStreamQuery,
  readStreamPage,
  SINCE_CLOCK_MARGIN_MS,
  type StreamBody,
  type StreamCursor,
  type StreamListing,
  type StreamPorts,
  type StreamSource,
  streamEventOf,
} from '../../../functions/domain/raw-data/stream';
import { type StreamEvent, streamName } from '../../../functions/domain/raw-data/stream-objects';
import { type LaneOpening, STREAM_SETTLE_MS } from '../../../functions/domain/raw-data/watermark';

const KEY_A = `srv_${'a'.repeat(48)}`;
const KEY_B = `srv_${'b'.repeat(48)}`;
const REVOKED = `srv_${'c'.repeat(48)}`;
const NOW = Date.UTC(2026, 10, 21, 12);

/** A stored line's `event` (what the aggregator writes), with what a stream must never serve beside it. */
function storedEvent(n: number, receivedMs: number): Record<string, unknown> {
  return {
    event_id: `e${n}`,
    event_name: n % 3 === 0 ? 'install' : 'purchase',
    install_uuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    ts_ms: receivedMs - 5,
    corrected_ts: receivedMs - 4,
    received_ms: receivedMs,
    revenue_usd: n % 3 === 0 ? null : 1.5,
    platform: 'ios',
    properties: null,
    country: 'DE',
    attribution: n % 2 === 0 ? null : { partner: 'meta', attribution_type: 'click', is_reinstall: false, fraud_reasons: [] },
  };
}

interface StoredObject {
  readonly name: string;
  /** Each line's `event`; undefined for a line without one (an erased line keeps its place). */
  readonly lines: readonly (Record<string, unknown> | undefined)[];
}

/** The app's stream objects in memory, listed in key order `listPage` at a time (S3 lists up to 1,000). */
function memorySource(objects: readonly StoredObject[], listPage = LIST_MAX_KEYS) {
  const byName = new Map(objects.map((object) => [object.name, object]));
  const calls = { list: 0, get: [] as string[] };
  const source: StreamSource = {
    async list(appId, after, max): Promise<StreamListing> {
      calls.list++;
      expect(appId).toBe('app_a');
      const names = [...byName.keys()].filter((name) => name > after).sort();
      const listed = names.slice(0, Math.min(max, listPage));
      return {
        objects: listed.map((name) => ({ name, size: 100 * ((byName.get(name)?.lines.length ?? 0) + 1) })),
        truncated: listed.length < names.length,
      };
    },
    async lines(appId, name) {
      calls.get.push(name);
      expect(appId).toBe('app_a');
      return byName.get(name)?.lines ?? [];
    },
  };
  return { source, calls };
}

const served = (stored: Record<string, unknown>) => streamEventOf(stored);

/**
 * Random stream objects of one app: key times increasing, some objects empty, some lines erased,
 * each event received before its apply opened, or up to 5 s after by the ingest host's clock.
 */
const streams = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 0, max: 5_000 }),
      lane: fc.integer({ min: 0, max: 63 }),
      lines: fc.array(
        fc.record({ erased: fc.integer({ min: 0, max: 7 }).map((n) => n === 0), age: fc.integer({ min: -5_000, max: 20_000 }) }),
        {
          maxLength: 6,
        },
      ),
    }),
    { maxLength: 40 },
  )
  .map((specs) => {
    let openedMs = NOW - 200_000;
    let n = 0;
    return specs.map((spec, seq): StoredObject => {
      openedMs += spec.gap;
      return {
        name: streamName({ openedMs, lane: spec.lane, seq: seq + 1 }),
        lines: spec.lines.map((line) => (line.erased ? undefined : storedEvent(n++, openedMs - line.age))),
      };
    });
  });

const keyTime = (name: string) => Number(name.slice(0, 13));

/** Every event of the read, in order: objects below the watermark in key order, then lines in order. */
function expected(objects: readonly StoredObject[], watermark: number, sinceMs?: number): StreamEvent[] {
  return [...objects]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .filter((object) => keyTime(object.name) < watermark)
    .flatMap((object) => object.lines)
    .filter((line): line is Record<string, unknown> => line !== undefined)
    .filter((line) => sinceMs === undefined || (line.received_ms as number) >= sinceMs)
    .map(served);
}

/** Pages a read from its start to has_more false, each page with the next limit and watermark. */
async function readAll(source: StreamSource, start: StreamCursor, limits: readonly number[], watermarks: readonly number[]) {
  const events: StreamEvent[] = [];
  let cursor = start;
  for (let page = 0; ; page++) {
    const limit = limits[page % limits.length] as number;
    const watermark = watermarks[Math.min(page, watermarks.length - 1)] as number;
    // Through the cursor's text, as a client carries it.
    const result = await readStreamPage(source, 'app_a', { limit, cursor: decodeCursor(encodeCursor(cursor)) }, watermark);
    expect(result.events.length).toBeLessThanOrEqual(limit);
    events.push(...result.events);
    cursor = result.next;
    if (!result.hasMore && page >= watermarks.length - 1) return { events, cursor, pages: page + 1 };
    if (page > 2_000) throw new Error('the read does not end');
  }
}

describe('paging the event stream', () => {
  it('gives every event below the watermark exactly once, in key and line order, whatever the page sizes', async () => {
    await fc.assert(
      fc.asyncProperty(
        streams,
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 7 }),
        async (objects, limits, listPage) => {
          const { source } = memorySource(objects, listPage);
          const { events } = await readAll(source, { position: { kind: 'start' } }, limits, [NOW]);
          expect(events).toEqual(expected(objects, NOW));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('ends a page before the event that would take it past its bytes, and the next page starts with that event', async () => {
    const bytesOf = (event: StreamEvent) => Buffer.byteLength(JSON.stringify(event));
    await fc.assert(
      fc.asyncProperty(
        // Events of 2 to 4 KB of properties and a 4 KB TC string (ingest allows both): over 7 MB in all.
        fc.array(fc.array(fc.integer({ min: 2_000, max: 4_000 }), { minLength: 400, maxLength: 700 }), { minLength: 3, maxLength: 4 }),
        async (objects) => {
          let n = 0;
          const stored = objects.map(
            (sizes, seq): StoredObject => ({
              name: streamName({ openedMs: NOW - 100_000 + seq, lane: 1, seq: seq + 1 }),
              lines: sizes.map((size) => ({
                ...storedEvent(n++, NOW - 200_000),
                properties: { note: 'p'.repeat(size) },
                consent: { gdpr_applies: true, tcf_string: 'C'.repeat(4_096 - (size % 7)), ts_ms: 1, event_id: 'c' },
              })),
            }),
          );
          const all = expected(stored, NOW);
          const { source } = memorySource(stored);
          let cursor: StreamCursor = { position: { kind: 'start' } };
          let taken = 0;
          let pages = 0;
          for (;;) {
            pages++;
            const page = await readStreamPage(source, 'app_a', { limit: 1000, cursor: decodeCursor(encodeCursor(cursor)) }, NOW);
            const bytes = page.events.reduce((sum, event) => sum + bytesOf(event), 0);
            expect(bytes).toBeLessThanOrEqual(MAX_PAGE_EVENT_BYTES);
            // The served events are checked whole by the tests above; here their order and count.
            expect(page.events.map((event) => event.event_id)).toEqual(
              all.slice(taken, taken + page.events.length).map((event) => event.event_id),
            );
            taken += page.events.length;
            // Full: the next event would pass the bytes or the limit; the last page holds the rest.
            const following = all[taken];
            if (following) expect(page.events.length === 1000 || bytes + bytesOf(following) > MAX_PAGE_EVENT_BYTES).toBe(true);
            expect(page.hasMore).toBe(taken < all.length);
            cursor = page.next;
            if (!page.hasMore) break;
          }
          expect(taken).toBe(all.length);
          expect(pages).toBeGreaterThan(1);
        },
      ),
      { numRuns: 3 },
    );
  });

  it('says has_more exactly when one LIST names every object left', async () => {
    await fc.assert(
      fc.asyncProperty(streams, fc.integer({ min: 1, max: 12 }), async (objects, limit) => {
        const { source } = memorySource(objects);
        const all = expected(objects, NOW);
        let cursor: StreamCursor = { position: { kind: 'start' } };
        let seen = 0;
        for (;;) {
          const page = await readStreamPage(source, 'app_a', { limit, cursor }, NOW);
          seen += page.events.length;
          expect(page.events.length).toBe(Math.min(limit, all.length - (seen - page.events.length)));
          expect(page.hasMore).toBe(seen < all.length);
          cursor = page.next;
          if (!page.hasMore) break;
        }
        expect(seen).toBe(all.length);
      }),
      { numRuns: 150 },
    );
  });

  it('hides objects at or above the watermark, and serves them once when it has passed them', async () => {
    await fc.assert(
      fc.asyncProperty(
        streams,
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 6 }),
        async (objects, limits, steps) => {
          const { source } = memorySource(objects);
          // The watermark only rises: from before the first object to past the last.
          let watermark = NOW - 200_000;
          const watermarks = [...steps.map((step) => (watermark += step)), NOW];
          const first = await readStreamPage(source, 'app_a', { limit: 1000, cursor: { position: { kind: 'start' } } }, watermarks[0]!);
          expect(first.events).toEqual(expected(objects, watermarks[0]!));
          const { events } = await readAll(source, { position: { kind: 'start' } }, limits, watermarks);
          expect(events).toEqual(expected(objects, NOW));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps a since_ms read to the events received at or after it, on every page through its cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        streams,
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: -250_000, max: 10_000 }),
        async (objects, limits, offset) => {
          const sinceMs = NOW + offset;
          const { source } = memorySource(objects, 5);
          const { events } = await readAll(source, { position: { kind: 'start' }, sinceMs }, limits, [NOW]);
          expect(events).toEqual(expected(objects, NOW, sinceMs));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('starts a since_ms read at the objects opened a settle time before it, so older ones cost no GET', async () => {
    const sinceMs = NOW - 20_000;
    const at = [NOW - 45_000, NOW - 25_000, NOW - 20_000, NOW - 12_000];
    const objects = at.map((openedMs, k) => ({
      name: streamName({ openedMs, lane: 1, seq: k + 1 }),
      // The second object's event was received a moment after its apply opened, by the ingest host's clock.
      lines: [storedEvent(k, k === 1 ? sinceMs + 5 : openedMs - 1)],
    }));
    const { source, calls } = memorySource(objects);
    const page = await readStreamPage(source, 'app_a', { limit: 10, cursor: { position: { kind: 'start' }, sinceMs } }, NOW);
    // The object opened at since_ms holds an event received before it: filtered.
    expect(page.events.map((event) => event.event_id)).toEqual(['e1', 'e3']);
    expect(calls.get).toEqual(objects.slice(1).map((object) => object.name));
    expect(SINCE_CLOCK_MARGIN_MS).toBe(STREAM_SETTLE_MS);
  });

  it('costs one LIST and a GET of each object a page reads, each once, and one more object to tell has_more', async () => {
    const objects = Array.from({ length: 30 }, (_, k) => ({
      name: streamName({ openedMs: NOW - 100_000 + k, lane: k % 64, seq: k + 1 }),
      lines: Array.from({ length: 10 }, (_, line) => storedEvent(k * 10 + line, NOW - 100_000)),
    }));
    const { source, calls } = memorySource(objects);
    const page = await readStreamPage(source, 'app_a', { limit: 50, cursor: { position: { kind: 'start' } } }, NOW);
    expect(page.events).toHaveLength(50);
    expect(page.hasMore).toBe(true);
    expect(calls.list).toBe(1);
    expect(new Set(calls.get).size).toBe(calls.get.length);
    // Five objects hold the page; the sixth says has_more; reading ahead stays within a few more.
    expect(calls.get.slice(0, 6)).toEqual(objects.slice(0, 6).map((object) => object.name));
    expect(calls.get.length).toBeLessThanOrEqual(8);
    // The page ends with the fifth object: the next one starts after it, without reading it again.
    expect(page.next).toEqual({ position: { kind: 'after', name: objects[4]!.name } });
  });

  it('goes on inside an object where the last page stopped', async () => {
    const object = {
      name: streamName({ openedMs: NOW - 60_000, lane: 7, seq: 3 }),
      lines: [0, 1, 2, 3].map((n) => storedEvent(n, NOW - 70_000)),
    };
    const { source, calls } = memorySource([object]);
    const first = await readStreamPage(source, 'app_a', { limit: 3, cursor: { position: { kind: 'start' } } }, NOW);
    expect(first.next).toEqual({ position: { kind: 'at', name: object.name, line: 3 } });
    expect(first.hasMore).toBe(true);
    const second = await readStreamPage(source, 'app_a', { limit: 3, cursor: first.next }, NOW);
    expect(second.events.map((event) => event.event_id)).toEqual(['e3']);
    expect(second).toMatchObject({ hasMore: false, next: { position: { kind: 'after', name: object.name } } });
    // A poll at the end of the stream reads no object again.
    calls.get.length = 0;
    const poll = await readStreamPage(source, 'app_a', { limit: 3, cursor: second.next }, NOW);
    expect(poll).toEqual({ events: [], next: second.next, hasMore: false });
    expect(calls.get).toEqual([]);
  });

  it('moves the cursor past objects that hold nothing for the read, and keeps it where it was on an empty stream', async () => {
    const empty = { name: streamName({ openedMs: NOW - 50_000, lane: 0, seq: 1 }), lines: [undefined] };
    const { source } = memorySource([empty]);
    const page = await readStreamPage(source, 'app_a', { limit: 5, cursor: { position: { kind: 'start' }, sinceMs: NOW - 60_000 } }, NOW);
    expect(page).toEqual({ events: [], next: { position: { kind: 'after', name: empty.name }, sinceMs: NOW - 60_000 }, hasMore: false });
    const none = await readStreamPage(memorySource([]).source, 'app_a', { limit: 5, cursor: { position: { kind: 'start' } } }, NOW);
    expect(none).toEqual({ events: [], next: { position: { kind: 'start' } }, hasMore: false });
  });

  it('reads nothing at a cursor that stands at or above the watermark', async () => {
    const object = { name: streamName({ openedMs: NOW, lane: 0, seq: 1 }), lines: [storedEvent(1, NOW - 1)] };
    const { source, calls } = memorySource([object]);
    const cursor: StreamCursor = { position: { kind: 'at', name: object.name, line: 0 } };
    expect(await readStreamPage(source, 'app_a', { limit: 5, cursor }, NOW)).toEqual({ events: [], next: cursor, hasMore: false });
    expect(calls).toEqual({ list: 0, get: [] });
  });

  it('fails the page when an object cannot be read, after the reads it started have settled', async () => {
    const objects = [1, 2, 3].map((k) => ({
      name: streamName({ openedMs: NOW - 50_000 + k, lane: k, seq: k }),
      lines: [storedEvent(k, NOW - 60_000)],
    }));
    const { source } = memorySource(objects);
    let running = 0;
    const failing: StreamSource = {
      list: source.list,
      async lines(appId, name) {
        running++;
        await new Promise((resolve) => setTimeout(resolve, name === objects[1]!.name ? 1 : 20));
        running--;
        if (name === objects[1]!.name) throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
        return source.lines(appId, name);
      },
    };
    await expect(readStreamPage(failing, 'app_a', { limit: 100, cursor: { position: { kind: 'start' } } }, NOW)).rejects.toThrow(
      'socket hang up',
    );
    expect(running).toBe(0);
  });
});

describe('the events served', () => {
  it('are the stored event with exactly the documented fields: no device id, no address, nothing else', () => {
    const stored = {
      ...storedEvent(1, NOW),
      device_id: 'idfa-123',
      client_ip: '198.51.100.7',
      attribution: { partner: 'meta', attribution_type: 'click', ip: '198.51.100.7', is_reinstall: false, fraud_reasons: [] },
    };
    const event = streamEventOf(stored);
    expect(Object.keys(event)).toEqual([
      'event_id',
      'event_name',
      'install_uuid',
      'ts_ms',
      'corrected_ts',
      'received_ms',
      'revenue_usd',
      'platform',
      'properties',
      'country',
      'attribution',
      'consent',
    ]);
    expect(JSON.stringify(event)).not.toMatch(/idfa-123|198\.51\.100\.7|device_id|client_ip/);
    expect(event.attribution).toMatchObject({ partner: 'meta', campaign: null, install_event_id: null });
    expect(streamEventOf(storedEvent(2, NOW)).attribution).toBeNull();
    // A line written before consent was streamed has none.
    expect(event.consent).toBeNull();
  });

  it("serves the line's consent and an impression by their documented members only", () => {
    const event = streamEventOf({
      ...storedEvent(1, NOW),
      event_name: 'ad_revenue',
      consent: { gdpr_applies: true, tcf_string: 'CQabc', measurement: false, ts_ms: NOW - 9, event_id: 'c1', client_ip: '198.51.100.7' },
      ad_revenue: { source: 'admob', network: 'admob', format: 'banner', revenue: 0.01, currency: 'EUR', impression_id: 'i1', idfa: 'x' },
    });
    expect(event.consent).toEqual({
      gdpr_applies: true,
      tcf_string: 'CQabc',
      ad_user_data: null,
      ad_personalization: null,
      third_party_sharing: null,
      measurement: false,
      ts_ms: NOW - 9,
      event_id: 'c1',
    });
    expect(event.ad_revenue).toEqual({
      source: 'admob',
      network: 'admob',
      format: 'banner',
      revenue: 0.01,
      currency: 'EUR',
      impression_id: 'i1',
    });
    expect(Object.keys(streamEventOf(storedEvent(2, NOW)))).not.toContain('ad_revenue');
  });

  it("serves a refund by its documented members only and a purchase's transaction id, each absent elsewhere", () => {
    const refund = streamEventOf({
      ...storedEvent(1, NOW),
      event_name: 'refund',
      refund: { purchase_event_id: 'p-1', transaction_id: null, revenue: 4.99, currency: 'EUR', client_ip: '198.51.100.7' },
    });
    expect(refund.refund).toEqual({ purchase_event_id: 'p-1', revenue: 4.99, currency: 'EUR' });
    expect(streamEventOf({ ...storedEvent(2, NOW), transaction_id: 'GPA.3372-4150' }).transaction_id).toBe('GPA.3372-4150');
    const plain = Object.keys(streamEventOf({ ...storedEvent(3, NOW), transaction_id: 42 }));
    expect(plain).not.toContain('refund');
    expect(plain).not.toContain('transaction_id');
  });
});

describe('the stream cursor', () => {
  const valid: StreamCursor[] = [
    { position: { kind: 'start' } },
    { position: { kind: 'start' }, sinceMs: NOW },
    { position: { kind: 'after', name: streamName({ openedMs: NOW, lane: 63, seq: 9_999_999_999 }) } },
    { position: { kind: 'at', name: streamName({ openedMs: 1, lane: 0, seq: 1 }), line: 12 }, sinceMs: -5 },
  ];

  it.each(valid.map((cursor) => [JSON.stringify(cursor), cursor]))('comes back as it went: %s', (_name, cursor) => {
    const text = encodeCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text)).toEqual(cursor);
  });

  const b64 = (text: string) => Buffer.from(text).toString('base64url');
  const name = streamName({ openedMs: NOW, lane: 1, seq: 2 });
  it.each([
    ['empty', ''],
    ['not base64url', 'eyJ2Ijox+Q=='],
    ['padded', `${b64('{"v":1}')}=`],
    ['not JSON', b64('{"v":1')],
    ['JSON but not an object', b64('[1]')],
    ['null', b64('null')],
    ['another version', b64('{"v":2}')],
    ['no version', b64('{}')],
    ['an unknown field', b64('{"v":1,"app":"app_b"}')],
    ['a key of another app', b64(`{"v":1,"k":"stream/app_b/${name}"}`)],
    ['a name that is no stream object', b64('{"v":1,"k":"0000000000001-00-0000000001.json"}')],
    ['a line without an object', b64('{"v":1,"i":3}')],
    ['a negative line', b64(`{"v":1,"k":"${name}","i":-1}`)],
    ['a fractional line', b64(`{"v":1,"k":"${name}","i":1.5}`)],
    ['a line as text', b64(`{"v":1,"k":"${name}","i":"1"}`)],
    ['a since_ms beyond any date', b64('{"v":1,"s":8640000000000001}')],
    ['a since_ms as text', b64('{"v":1,"s":"5"}')],
    // Issue 36: one limit=1 page of it read 1,000 objects that hold nothing for the filter.
    ['a position before its filter (the first object, since_ms at the end of time)', b64(`{"v":1,"k":"${name}","s":8640000000000000}`)],
    ['a line before its filter', b64(`{"v":1,"k":"${name}","i":0,"s":${NOW + 60_000}}`)],
    ['too long', b64(`{"v":1,"k":"${name}","x":"${'a'.repeat(300)}"}`)],
  ])('is invalid_cursor when %s', (_why, text) => {
    expect(() => decodeCursor(text)).toThrow(expect.objectContaining({ statusCode: 400, code: 'invalid_cursor' }));
  });

  it('is invalid_cursor when a spelling decodes to the same bytes as another (the last character changed in its unused bits)', () => {
    const text = encodeCursor({ position: { kind: 'start' } }); // 11 characters: the last carries 2 unused bits
    const sibling = text.slice(0, -1) + String.fromCharCode(text.charCodeAt(text.length - 1) + 1);
    expect(Buffer.from(sibling, 'base64url')).toEqual(Buffer.from(text, 'base64url'));
    expect(() => decodeCursor(sibling)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
  });

  it('never decodes a tampered cursor into anything but a well-formed one of the same app', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...valid),
        fc.nat(),
        fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/.'),
        (cursor, at, char) => {
          const text = encodeCursor(cursor);
          const index = at % text.length;
          const tampered = text.slice(0, index) + char + text.slice(index + 1);
          let decoded: StreamCursor;
          try {
            decoded = decodeCursor(tampered);
          } catch (error) {
            expect(error).toMatchObject({ statusCode: 400, code: 'invalid_cursor' });
            return;
          }
          // Whatever it decodes to is a cursor the endpoint could have made: it encodes back to the same text.
          expect(encodeCursor(decoded)).toBe(tampered);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the stream query', () => {
  it.each(['0', '1001', '1.5', 'x', '', '-1', '1e2', ' 5', '5,6', '99999999999999999'])('refuses limit=%j with invalid_limit', (limit) => {
    expect(() => parseStreamQuery({ limit })).toThrow(expect.objectContaining({ statusCode: 400, code: 'invalid_limit' }));
  });

  it.each([
    ['1', 1],
    ['1000', 1000],
    [undefined, 100],
  ])('takes limit=%j as %d', (limit, expected) => {
    expect(parseStreamQuery({ limit }).limit).toBe(expected);
  });

  it.each(['abc', '1e12', '', '1.5', '8640000000000001', '-8640000000000001', '+5', '5,6'])(
    'refuses since_ms=%j with invalid_since_until',
    (since) => {
      expect(() => parseStreamQuery({ since_ms: since })).toThrow(
        expect.objectContaining({ statusCode: 400, code: 'invalid_since_until' }),
      );
    },
  );

  it('starts a read at since_ms, or at the beginning, and takes the rest from a cursor', () => {
    expect(parseStreamQuery({ since_ms: '-8640000000000000' }).cursor).toEqual({ position: { kind: 'start' }, sinceMs: -8.64e15 });
    expect(parseStreamQuery({}).cursor).toEqual({ position: { kind: 'start' } });
    const cursor: StreamCursor = { position: { kind: 'at', name: streamName({ openedMs: NOW, lane: 1, seq: 2 }), line: 4 }, sinceMs: NOW };
    expect(parseStreamQuery({ cursor: encodeCursor(cursor), app_id: 'app_b' }).cursor).toEqual(cursor);
  });

  it('refuses a cursor beside since_ms with invalid_cursor, and checks since_ms, then limit, then the cursor', () => {
    const cursor = encodeCursor({ position: { kind: 'start' } });
    const codeOf = (params: Record<string, string>) => {
      try {
        parseStreamQuery(params);
        return 'ok';
      } catch (error) {
        return (error as ServiceError).code;
      }
    };
    expect(codeOf({ cursor, since_ms: '5' })).toBe('invalid_cursor');
    expect(codeOf({ cursor: 'x!', since_ms: 'x', limit: '0' })).toBe('invalid_since_until');
    expect(codeOf({ cursor: 'x!', limit: '0' })).toBe('invalid_limit');
    expect(codeOf({ cursor: 'x!' })).toBe('invalid_cursor');
  });
});

describe('answering GET /api/v1/stream/events', () => {
  function world(objects: readonly StoredObject[], lanes: readonly LaneOpening[] = []) {
    const memory = memorySource(objects);
    let laneReads = 0;
    const ports: StreamPorts = {
      keys: {
        serverKey: async (key) =>
          ({
            [KEY_A]: { app_id: 'app_a', revoked: false },
            [KEY_B]: { app_id: 'app_b', revoked: false },
            [REVOKED]: { app_id: 'app_a', revoked: true },
          })[key],
        appTimeZone: async () => 'UTC',
      },
      lanes: {
        lanes: async () => {
          laneReads++;
          return lanes;
        },
      },
      objects: memory.source,
      nowMs: () => NOW,
    };
    return { ports, calls: memory.calls, laneReads: () => laneReads };
  }
  const bearer = (key: string) => `Bearer ${key}`;
  const objects = [0, 1, 2].map((k) => ({
    name: streamName({ openedMs: NOW - 35_000 + k * 10_000, lane: k, seq: 1 }),
    lines: [storedEvent(k, NOW - 40_000)],
  }));

  it.each([
    ['no Authorization header', undefined, 401, 'missing_bearer_token'],
    ['another scheme', 'Basic dXNlcjpwYXNz', 401, 'missing_bearer_token'],
    ['a malformed key', 'Bearer srv_short', 401, 'invalid_or_revoked_key'],
    ['an unknown key', bearer(`srv_${'0'.repeat(48)}`), 401, 'invalid_or_revoked_key'],
    ['a revoked key', bearer(REVOKED), 401, 'invalid_or_revoked_key'],
  ])('refuses %s as the reports do, before reading the parameters or any store', async (_name, authorization, status, code) => {
    const { ports, calls, laneReads } = world(objects);
    await expect(answerStream(ports, { authorization, params: { limit: '0', cursor: '!' } })).rejects.toMatchObject({
      statusCode: status,
      code,
    });
    expect({ ...calls, lanes: laneReads() }).toEqual({ list: 0, get: [], lanes: 0 });
  });

  it('serves the key app only, below the watermark the open lanes and the settle time make', async () => {
    // Lane 5 is open since the third object's apply opened: that object is not final yet.
    const lanes: LaneOpening[] = [
      { seq: 4, applied: 4, openedMs: NOW - 100_000 },
      { seq: 9, applied: 8, openedMs: NOW - 15_000 },
      { seq: 3, applied: 2 },
      // Open since long before, but writing another app's stream only.
      { seq: 2, applied: 1, openedMs: NOW - 100_000, apps: ['app_b'] },
    ];
    const { ports, laneReads } = world(objects, lanes);
    const page: StreamBody = await answerStream(ports, { authorization: bearer(KEY_A), params: { app_id: 'app_b' } });
    expect(page.events.map((event) => event.event_id)).toEqual(['e0', 'e1']);
    expect(page.has_more).toBe(false);
    expect(decodeCursor(page.next_cursor)).toEqual({ position: { kind: 'after', name: objects[1]!.name } });
    expect(laneReads()).toBe(1);
    // Once the lane is done, the settle time alone holds the watermark back.
    const later = await answerStream(world(objects).ports, { authorization: bearer(KEY_A), params: { cursor: page.next_cursor } });
    expect(later.events.map((event) => event.event_id)).toEqual(['e2']);
    expect(NOW - STREAM_SETTLE_MS).toBeGreaterThan(keyTime(objects[2]!.name));
  });
});
