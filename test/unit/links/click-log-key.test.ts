import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  clickLogKey,
  clickLogRange,
  decodeClickId,
  encodeClickId,
  ipPlatformHash,
  newClickId,
} from '../../../functions/domain/links/click-log-key';

const parts = fc.record({
  tsMs: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  iph: fc.stringMatching(/^[0-9a-f]{4}$/),
  random: fc.uint8Array({ minLength: 18, maxLength: 18 }),
});

describe('a click id', () => {
  it('decodes to the time, hash and random bytes it was made of, and spells each id one way', () => {
    fc.assert(
      fc.property(parts, (made) => {
        const id = encodeClickId(made);
        expect(id).toMatch(/^[A-Za-z0-9_-]{36}$/);
        expect(decodeClickId(id)).toEqual(made);
        expect(encodeClickId(decodeClickId(id) as typeof made)).toBe(id);
      }),
      { numRuns: 500 },
    );
  });

  it('decodes nothing else, never throwing: ids made before click_log, mangled or forged ones', () => {
    const oldId = randomBytes(16).toString('base64url');
    for (const id of [oldId, '', 'click_1', 'c-missing', '~'.repeat(36), 'A'.repeat(35), 'A'.repeat(37)]) {
      expect(decodeClickId(id)).toBeUndefined();
      expect(clickLogKey('app_1', id)).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 40 })), (id) => {
        const decoded = decodeClickId(id);
        // Whatever does decode is an id of this format, spelt the one way it encodes to.
        if (decoded) expect(encodeClickId(decoded)).toBe(id);
      }),
      { numRuns: 2_000 },
    );
    // Any other first byte is another format: a version this code does not know is not found.
    fc.assert(
      fc.property(parts, fc.integer({ min: 0, max: 255 }), (made, version) => {
        const bytes = Buffer.from(encodeClickId(made), 'base64url');
        bytes[0] = version;
        expect(decodeClickId(bytes.toString('base64url')) !== undefined).toBe(version === 1);
      }),
    );
  });

  it('refuses to encode parts that would not decode to themselves', () => {
    const ok = { tsMs: 0, iph: '0000', random: new Uint8Array(18) };
    expect(() => encodeClickId({ ...ok, tsMs: -1 })).toThrow(RangeError);
    expect(() => encodeClickId({ ...ok, tsMs: 2 ** 48 })).toThrow(RangeError);
    expect(() => encodeClickId({ ...ok, tsMs: 1.5 })).toThrow(RangeError);
    expect(() => encodeClickId({ ...ok, iph: 'ABCD' })).toThrow(RangeError);
    expect(() => encodeClickId({ ...ok, iph: '00000000' })).toThrow(RangeError);
    expect(() => encodeClickId({ ...ok, random: new Uint8Array(16) })).toThrow(RangeError);
  });

  it('names the key of its click in click_log: the app, the UTC hour, the hash and its first two bits as the shard', () => {
    const tsMs = Date.UTC(2026, 10, 29, 4, 59, 59, 999);
    const appIpPlatform = 'app_1#203.0.113.9#ios';
    const iph = createHash('sha256').update(appIpPlatform).digest('hex').slice(0, 4);
    expect(ipPlatformHash(appIpPlatform)).toBe(iph);
    const id = newClickId({ tsMs, appIpPlatform });
    expect(decodeClickId(id)).toMatchObject({ tsMs, iph });
    expect(clickLogKey('app_1', id)).toEqual({
      pk: `app_1#2026-11-29T04#${Number.parseInt(iph[0] ?? '', 16) >> 2}`,
      sk: `${iph}#00${tsMs}#${id}`,
    });
    expect(newClickId({ tsMs, appIpPlatform })).not.toBe(id);
  });
});

describe("an (app, IP, platform)'s range of sort keys", () => {
  it('holds exactly the keys of that hash made within [from, to], whatever the ids', () => {
    fc.assert(
      fc.property(
        parts,
        fc.stringMatching(/^[0-9a-f]{8}$/),
        fc.integer({ min: -10, max: 2 ** 48 + 10 }),
        fc.integer({ min: -10, max: 2 ** 48 + 10 }),
        (click, iph, fromMs, toMs) => {
          const id = encodeClickId(click);
          const sk = clickLogKey('app', id)?.sk as string;
          const range = clickLogRange(iph, fromMs, toMs);
          const inRange = range !== undefined && range.from <= sk && sk <= range.to;
          expect(inRange).toBe(click.iph === iph && fromMs <= click.tsMs && click.tsMs <= toMs);
        },
      ),
      { numRuns: 2_000 },
    );
    // The key's own time is always in reach: the bounds are the click's own.
    fc.assert(
      fc.property(parts, (click) => {
        const sk = clickLogKey('app', encodeClickId(click))?.sk as string;
        const range = clickLogRange(click.iph, click.tsMs, click.tsMs);
        expect(range && range.from <= sk && sk <= range.to).toBe(true);
      }),
    );
    expect(clickLogRange('0000', 5, 4)).toBeUndefined();
    expect(clickLogRange('0000', Number.NaN, 4)).toBeUndefined();
  });
});
