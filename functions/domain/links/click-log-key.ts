import { createHash, randomBytes } from 'node:crypto';
import { appHourKey } from './click';

/**
 * Where a click lives in the click_log table (lib/manifest.ts; docs/adr/0008, section 2 revised:
 * one click log table, no index). The base key serves every read, so a click is one write unit:
 *
 * - pk `<app_id>#<YYYY-MM-DDTHH>#<shard>`: the click's UTC hour and a shard 0-3 that is the first
 *   two bits of `iph` (clickLogShard), so every click of one (app, IP, platform) in an hour is in
 *   one partition (probabilistic matching reads one key per hour) and an app's hour is spread over
 *   CLICK_LOG_SHARDS (the export, the click-count lane and the reports' top-up read the hour's 4
 *   keys);
 * - sk `<iph>#<ts_ms, 15 digits>#<click_id>`: newest last within an (app, IP, platform), so the
 *   latest click is one descending range read;
 * - the click id encodes its own key (version, ts_ms, iph, 144 random bits), so a look-up by id
 *   with the app known is one GetItem, and needs no index.
 *
 * `iph` is 4 hex digits (16 bits) of SHA-256 of appIpPlatform (click.ts): two (IP, platform) pairs
 * of an app may share it, so a reader compares app_ip_platform on the item. 16 bits, not more, because
 * the id travels (store URLs, the export): with the app id and platform, each value is the hash of
 * about 65,000 IPv4 addresses (2^32 / 2^16) and far more IPv6 ones, so the id does not give the
 * address away; and a probabilistic match still reads few items (an app's clicks of an hour / 65,536).
 */

/** The first byte of a click id of this format; ids made before it (16 random bytes) never decode. */
const VERSION = 1;
const TS_BYTES = 6;
const IPH_BYTES = 2;
const RANDOM_BYTES = 18;
const ID_BYTES = 1 + TS_BYTES + IPH_BYTES + RANDOM_BYTES;
/** 27 bytes are 36 base64url characters, with no padding bits: one spelling per id. */
const ID_PATTERN = /^[A-Za-z0-9_-]{36}$/;
const IPH_PATTERN = /^[0-9a-f]{4}$/;
/** 2^48 - 1, the largest ts_ms 6 bytes hold (the year 10889): 15 digits. */
const MAX_TS_MS = 2 ** 48 - 1;
const TS_DIGITS = 15;

export interface ClickIdParts {
  readonly tsMs: number;
  /** 4 lower-case hex digits. */
  readonly iph: string;
  /** 18 bytes. */
  readonly random: Uint8Array;
}

/** The short hash of an app_ip_platform (click.ts): 4 hex digits of SHA-256. */
export const ipPlatformHash = (appIpPlatform: string): string => createHash('sha256').update(appIpPlatform).digest('hex').slice(0, 4);

export function encodeClickId(parts: ClickIdParts): string {
  if (!Number.isSafeInteger(parts.tsMs) || parts.tsMs < 0 || parts.tsMs > MAX_TS_MS)
    throw new RangeError(`click time out of range: ${parts.tsMs}`);
  if (!IPH_PATTERN.test(parts.iph)) throw new RangeError(`not an ip-platform hash: ${parts.iph}`);
  if (parts.random.length !== RANDOM_BYTES) throw new RangeError(`a click id takes ${RANDOM_BYTES} random bytes`);
  const bytes = Buffer.alloc(ID_BYTES);
  bytes.writeUInt8(VERSION, 0);
  bytes.writeUIntBE(parts.tsMs, 1, TS_BYTES);
  bytes.write(parts.iph, 1 + TS_BYTES, 'hex');
  bytes.set(parts.random, 1 + TS_BYTES + IPH_BYTES);
  return bytes.toString('base64url');
}

/** The parts of a click id of this format; undefined for anything else (an older id, a forged or mangled one). */
export function decodeClickId(clickId: string): ClickIdParts | undefined {
  if (!ID_PATTERN.test(clickId)) return undefined;
  const bytes = Buffer.from(clickId, 'base64url');
  if (bytes.length !== ID_BYTES || bytes.readUInt8(0) !== VERSION) return undefined;
  return {
    tsMs: bytes.readUIntBE(1, TS_BYTES),
    iph: bytes.subarray(1 + TS_BYTES, 1 + TS_BYTES + IPH_BYTES).toString('hex'),
    random: new Uint8Array(bytes.subarray(1 + TS_BYTES + IPH_BYTES)),
  };
}

/** A new click id for a click of this time and app_ip_platform: 144 random bits, so it cannot be guessed to steal an install. */
export const newClickId = (click: { readonly tsMs: number; readonly appIpPlatform: string }): string =>
  encodeClickId({ tsMs: click.tsMs, iph: ipPlatformHash(click.appIpPlatform), random: randomBytes(RANDOM_BYTES) });

export const utcHourOf = (tsMs: number): string => new Date(tsMs).toISOString().slice(0, 13);

/**
 * The shards of an app's hour in click_log. Four, not the old index's 16 (docs/adr/0008, "Four
 * shards"): every report read that reaches the last two hours reads each of them (the top-up), so
 * their number is the report's cost; four take 4,000 writes a second of one app before DynamoDB
 * splits a key for heat, which it can do here because the sort key spreads an hour's clicks over
 * 65,536 `iph` values.
 */
export const CLICK_LOG_SHARDS: readonly string[] = ['0', '1', '2', '3'];

/** The shard of a click of this iph: its first two bits. */
export const clickLogShard = (iph: string): string => (Number.parseInt(iph.slice(0, 1), 16) >> 2).toString();

/** The partition of an app's hour (`YYYY-MM-DDTHH`) and shard (CLICK_LOG_SHARDS). */
export const clickLogPk = (appId: string, hour: string, shard: string): string => appHourKey(appId, hour, shard);

const paddedTs = (tsMs: number): string => String(tsMs).padStart(TS_DIGITS, '0');

/** The key of a click in click_log: undefined when its id is not of this format. */
export function clickLogKey(appId: string, clickId: string): { pk: string; sk: string } | undefined {
  const parts = decodeClickId(clickId);
  if (!parts) return undefined;
  return { pk: clickLogPk(appId, utcHourOf(parts.tsMs), clickLogShard(parts.iph)), sk: `${parts.iph}#${paddedTs(parts.tsMs)}#${clickId}` };
}

/**
 * The sort-key range of an (app, IP, platform)'s clicks made within [fromMs, toMs]: every sk of
 * that iph and a ts_ms in the range sorts between the two ('~' sorts after every base64url digit).
 */
export function clickLogRange(iph: string, fromMs: number, toMs: number): { from: string; to: string } | undefined {
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) return undefined;
  const from = Math.max(0, Math.ceil(fromMs));
  const to = Math.min(MAX_TS_MS, Math.floor(toMs));
  return from > to ? undefined : { from: `${iph}#${paddedTs(from)}#`, to: `${iph}#${paddedTs(to)}#~` };
}
