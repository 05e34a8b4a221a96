import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The pure arithmetic of bench/batch-sizes.ts (test/unit/bench/batch-sizes.test.ts): the backlog
 * flag, a key's units scaled to a rate, the hottest key, and an item's size as DynamoDB counts it.
 */

/** The rate one app and one company is scaled to. */
export const TARGET_EVENTS_PER_S = 10_000;

export function backlogBatches(argv: readonly string[], fallback = 3000): number {
  const at = argv.indexOf('--backlog-batches');
  if (at < 0) return fallback;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--backlog-batches needs a positive whole number, not ${argv[at + 1]}`);
  return value;
}

/** Units a key took in a run of `events` events, as units per second at `eventsPerS` events a second. */
export function scaledToRate(units: number, events: number, eventsPerS = TARGET_EVENTS_PER_S): number {
  if (!(events > 0)) throw new Error('scaling a run of no events');
  return (units / events) * eventsPerS;
}

/** The key with the most units (the first of equals, in the map's order), scaled to `eventsPerS`. */
export function hottestKey(
  unitsByKey: ReadonlyMap<string, number>,
  events: number,
  eventsPerS = TARGET_EVENTS_PER_S,
): { key: string; wcu_per_s: number } {
  let hottest: [string, number] | undefined;
  for (const entry of unitsByKey) if (hottest === undefined || entry[1] > hottest[1]) hottest = entry;
  if (hottest === undefined) throw new Error('no partition key took a write');
  return { key: hottest[0], wcu_per_s: scaledToRate(hottest[1], events, eventsPerS) };
}

/** A tenant's ids out of a partition key, and a month suffix generalised, so keys read the same in every run. */
export function anonymousKey(key: string, appId: string, companyId: string): string {
  return key
    .replaceAll(appId, '<app_id>')
    .replaceAll(companyId, '<company_id>')
    .replace(/#\d{4}-\d{2}(?=#|$)/, '#<yyyy-mm>')
    .replace(/\p{Cc}/gu, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * An item's size as DynamoDB counts it for write units and the 400 KB limit
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * each attribute's name in UTF-8 bytes plus its value; a string its UTF-8 bytes, a binary its
 * bytes, a number 1 byte plus 1 per two significant digits (one more for an even count of digits
 * on an odd exponent, and for a sign), a boolean or null 1 byte, a list or map 3 bytes plus 1 per
 * element and the elements themselves, a set its elements. The number encoding is the one the
 * local emulator (dynalite) bills by, which the unit test checks against it.
 */
export function itemBytes(item: Readonly<Record<string, AttributeValue>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
  if (value.M !== undefined) return 3 + Object.keys(value.M).length + itemBytes(value.M);
  throw new Error(`an attribute value of no known type: ${JSON.stringify(value)}`);
}

function numberBytes(text: string): number {
  const match = /^(-?)(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`not a DynamoDB number: ${text}`);
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`;
  const first = digits.search(/[1-9]/);
  if (first < 0) return 1; // zero
  const significant = digits.slice(first).replace(/0+$/, '');
  // The decimal exponent of the first significant digit (Big.js's `e`): 12.5 -> 1, 0.05 -> -2.
  const e = whole.length - 1 - first + Number(exponent);
  return 1 + Math.ceil(significant.length / 2) + (significant.length % 2 || e % 2 ? 0 : 1) + (sign ? 1 : 0);
}
