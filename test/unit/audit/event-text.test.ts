import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { toJsonLines } from '../../../functions/domain/audit/encode';
import { ESCAPED_KEY, eventTexts, MULTI_LINE, REPEATED_DEVICE_ID } from '../../../functions/domain/audit/event-text';
import { auditLines } from '../../../functions/domain/audit/lines';
import { auditRecord } from '../../../functions/domain/audit/record';
import type { AuditBatch } from '../../../functions/domain/audit/types';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 2, 9, 12, 0);
const batch: AuditBatch = {
  companyId: 'com_1',
  appId: 'app_1',
  receivedMs: NOW,
  bodySha256: 'x',
  clientIp: '198.51.100.7',
  sdkVersion: 'ios/2.1.0',
};

/** The entries' texts as eventTexts finds them, each without its device_id member where it found one. */
function textsOf(body: string, count: number) {
  const bytes = Buffer.from(body);
  const texts = eventTexts(bytes, count);
  if (texts === undefined) return undefined;
  return Array.from({ length: count }, (_, k) => {
    const [start, end, cutFrom, cutTo] = texts.spans.slice(4 * k, 4 * k + 4);
    return {
      text: bytes.subarray(start, end).toString(),
      withoutDeviceId: cutFrom < 0 ? undefined : bytes.subarray(start, cutFrom).toString() + bytes.subarray(cutTo, end).toString(),
      flags: texts.flags[k],
    };
  });
}

describe('event texts in the body', () => {
  it('finds each entry of the events array, whatever it holds', () => {
    const body = '{"sent_at_ms":1,"events":[{"a":"}],[{\\"\\\\"},[1,[2]],"x\\"]",-1.5e3,null,{}],"z":[{"events":[0]}]}';
    expect(textsOf(body, 6)?.map((entry) => entry.text)).toEqual(['{"a":"}],[{\\"\\\\"}', '[1,[2]]', '"x\\"]"', '-1.5e3', 'null', '{}']);
  });

  it('takes the last events member, as JSON.parse does, and gives up on an escaped root key', () => {
    expect(textsOf('{"events":[1,2,3],"events":[{"b":1}]}', 1)?.map((entry) => entry.text)).toEqual(['{"b":1}']);
    expect(textsOf('{"events":[1,2,3],"events":[{"b":1}]}', 3)).toBeUndefined();
    expect(textsOf('{"events":[{"b":1}],"\\u0065vents":[1,2]}', 1)).toBeUndefined();
  });

  it('trims whitespace around an entry and marks one with a line break inside', () => {
    const body = '\ufeff{ "events" : [ {"a": 1} ,\n {\n"b": 2\n}\t] }';
    const texts = textsOf(body, 2)!;
    expect(texts.map((entry) => entry.text)).toEqual(['{"a": 1}', '{\n"b": 2\n}']);
    expect(texts.map((entry) => entry.flags & MULTI_LINE)).toEqual([0, MULTI_LINE]);
  });

  it('cuts a device_id member wherever it stands, with its comma', () => {
    const body =
      '{"events":[{"device_id":"d","a":1},{"a":1, "device_id":"d" ,"b":2},{"a":1,"device_id":{"x":[1]}},{"device_id":"d"},{"a":{"device_id":1}}]}';
    expect(textsOf(body, 5)?.map((entry) => entry.withoutDeviceId)).toEqual(['{"a":1}', '{"a":1,"b":2}', '{"a":1}', '{}', undefined]);
  });

  it('skips strings four bytes at a time yet stops at every quote and backslash, wherever it falls', () => {
    const strings: string[] = [];
    for (let before = 0; before < 9; before++) {
      for (const special of ['"', '\\', '\\"', '\u0000', 'é"', '🚀\\'])
        strings.push(`${'x'.repeat(before)}${special}${'y'.repeat(before % 5)}`);
    }
    for (let pad = 0; pad < 4; pad++) {
      const events = strings.map((text, i) => ({ [`k${'_'.repeat((i + pad) % 4)}`]: text, n: i }));
      const body = `{"p":"${'.'.repeat(pad)}","events":${JSON.stringify(events)}}`;
      expect(textsOf(body, events.length)?.map((entry) => entry.text)).toEqual(events.map((e) => JSON.stringify(e)));
    }
  });

  it('gives up on a text that is not JSON after all rather than run off its end', () => {
    for (const body of ['{"events":["abc', '{"events":["a\\"', '{"events":["ab\\', '{"events":[{"a":"b"}],"x":"\\"']) {
      expect(eventTexts(Buffer.from(body), 1)).toBeUndefined();
    }
  });

  it('measures how deep each entry nests, the entry itself being one level', () => {
    const texts = eventTexts(Buffer.from('{"events":[{"a":[{"b":{}}]},1,{},[[]],"{[{"],"z":[[[[]]]]}'), 5);
    expect(texts?.depths).toEqual([4, 0, 1, 2, 0]);
  });

  it('flags a repeated device_id and an escaped key, where a cut cannot be trusted', () => {
    const texts = textsOf('{"events":[{"device_id":"a","device_id":"b"},{"device\\u005fid":"a"},{"a":"device_id"}]}', 3)!;
    expect(texts.map((entry) => entry.flags)).toEqual([REPEATED_DEVICE_ID, ESCAPED_KEY, 0]);
    expect(texts[2].withoutDeviceId).toBeUndefined();
  });
});

/** A small deterministic random source, so one fast-check seed drives the spelling of a body. */
function randomOf(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

/**
 * Valid JSON for `value` as a client might spell it: whitespace and line breaks between tokens,
 * escaped characters, numbers with exponents, duplicate keys whose earlier value JSON.parse drops.
 */
function spell(value: unknown, random: (n: number) => number): string {
  const space = () => [' ', '', '', '\n', '\t', '\r\n'][random(6)].repeat(random(3) === 0 ? 1 : 0);
  const string = (text: string) =>
    `"${[...text].map((c) => (random(4) === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(c).slice(1, -1))).join('')}"`;
  if (typeof value === 'string') return string(value);
  if (typeof value === 'number') return Number.isSafeInteger(value) && random(3) === 0 ? `${value}e0` : JSON.stringify(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${space()}${value.map((item) => spell(item, random)).join(`${space()},${space()}`)}${space()}]`;
  const members = Object.entries(value).map(([key, item]) => `${string(key)}${space()}:${space()}${spell(item, random)}`);
  if (random(5) === 0) members.unshift(`"${['device_id', 'event_id', 'x'][random(3)]}":${spell([1, '{'], random)}`);
  return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
}

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const entry = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({
        overrides: fc.dictionary(fc.constantFrom('device_id', 'platform', 'revenue_usd', 'properties', 'note', '"q"', 'ü'), jsonValue, {
          maxKeys: 3,
        }),
      })
      .map(({ overrides }) => validEvent(overrides, NOW) as unknown),
  },
  { weight: 3, arbitrary: fc.string().map((device_id) => validEvent({ device_id }, NOW) as unknown) },
  { weight: 1, arbitrary: jsonValue },
);

describe('audit lines copied from the body', () => {
  it('parse to exactly the lines JSON.stringify writes, for any batch however it is spelled', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 12 }), fc.integer(), fc.boolean(), async (events, seed, bom) => {
        const random = randomOf(seed);
        const body = `${bom ? '\ufeff' : ''}{${random(2) ? '"events":[0],' : ''}"events":${spell(events, random)},"sent_at_ms":${NOW}}`;
        const bytes = Buffer.from(body);
        const parsed = (JSON.parse(body.replace(/^\ufeff/, '')) as { events: unknown[] }).events;
        const { verdicts } = judgeEvents(parsed, NOW, NOW);

        const copied = gunzipSync(await auditRecord(parsed, verdicts, batch, bytes).encode()).toString('utf8');
        const written = auditLines(parsed, verdicts, batch).map((line) => JSON.stringify(line));
        expect(copied.endsWith('\n')).toBe(true);
        expect(
          copied
            .slice(0, -1)
            .split('\n')
            .map((line) => JSON.parse(line)),
        ).toEqual(written.map((line) => JSON.parse(line)));
      }),
      { numRuns: 300 },
    );
  });

  it('writes the same bytes as toJsonLines when installs and devices repeat, change and are missing from line to line', async () => {
    // An SDK's batch is one install and one device: the writer makes each line's install_uuid and device_hash once for a
    // run of them. Here the runs are short and broken by rejected lines, lines without a device
    // and converted ones (whose fx is written after them).
    const installs = ['6f1c2a3b-0d4e-4f5a-8b6c-7d8e9f0a1b2c', '0A1B2C3D-4E5F-4A6B-9C7D-8E9FA0B1C2D3'];
    const line = fc.record({
      install: fc.constantFrom(0, 1, -1),
      device: fc.constantFrom('IDFA-1', 'IDFA-2', undefined),
      broken: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 16 }), async (shapes) => {
        const events = shapes.map(({ install, device, broken }, i) => {
          const event: Record<string, unknown> = validEvent({ event_id: `e-${i}` }, NOW);
          event.install_uuid = install < 0 ? 'not a uuid' : installs[install];
          if (device !== undefined) event.device_id = device;
          if (broken) event.event_name = '';
          return event;
        });
        const bytes = Buffer.from(JSON.stringify({ events, sent_at_ms: NOW }));
        const { verdicts } = judgeEvents(events, NOW, NOW);
        const copied = gunzipSync(await auditRecord(events, verdicts, batch, bytes).encode()).toString('utf8');
        expect(copied).toBe(toJsonLines(auditLines(events, verdicts, batch)));
      }),
      { numRuns: 200 },
    );
  });
});
