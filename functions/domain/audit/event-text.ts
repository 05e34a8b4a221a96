/**
 * Where each entry of a batch's `events` array is in the body's own JSON text, so the audit record
 * can store an event by copying the bytes the client sent instead of writing the parsed value out
 * again with JSON.stringify (the cost of each is measured in docs/ingestion.md).
 *
 * The text has already been parsed by JSON.parse, so it is valid JSON, and this is a scanner of
 * structure only: strings are skipped (a backslash skips the character after it), brackets and
 * braces outside strings count depth, and every byte of a multi-byte UTF-8 character is 0x80 or
 * above, so it can never be mistaken for one of them. It follows JSON.parse where that matters:
 * the last `events` member of the root object is the one parsed. When it cannot be sure (a root
 * key written with an escape), it gives up and the caller writes every event out as before.
 */
export interface EventTexts {
  /** The decompressed body, as JSON.parse read it. */
  readonly text: Uint8Array;
  /**
   * Four numbers per entry: the start and end (exclusive) of its JSON text, then the start and end
   * of the text to leave out to drop its top-level `device_id` member (-1 when it has none).
   */
  readonly spans: readonly number[];
  /** Per entry: MULTI_LINE, ESCAPED_KEY, REPEATED_DEVICE_ID, or 0. */
  readonly flags: readonly number[];
  /**
   * Per entry: the levels its text nests, the entry itself being 1 (a scalar entry 0). Its parsed
   * value has no more (a duplicate key's dropped value may have had more), so an entry at most
   * MAX_EVENT_DEPTH deep here passes the depth rule without being walked (judgeEvents).
   */
  readonly depths: readonly number[];
}

/** The entry has a line break between its tokens: copied as it is, it would split a JSONL line. */
export const MULTI_LINE = 1;
/** A top-level key of the entry is written with an escape, so it could spell `device_id`. */
export const ESCAPED_KEY = 2;
/** The entry has more than one top-level `device_id` member. */
export const REPEATED_DEVICE_ID = 4;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;

const EVENTS = [...'"events"'].map((c) => c.charCodeAt(0));
const DEVICE_ID = [...'"device_id"'].map((c) => c.charCodeAt(0));

/**
 * The texts of the `count` entries of the root object's `events` array, or undefined when the
 * text does not show exactly that many (which for a body JSON.parse read as a batch of `count`
 * events only happens when a root key is escaped).
 *
 * Depth: the root object is 1, the events array 2, an entry's own members 3.
 */
export function eventTexts(text: Uint8Array, count: number): EventTexts | undefined {
  // Plain arrays of small integers: a typed array of this size is made outside the heap, about a
  // microsecond each.
  const spans: number[] = new Array(count * 4);
  const flags: number[] = new Array(count);
  const depths: number[] = new Array(count);
  const end = text.length;
  let depth = 0;
  /** The next string at depth 1 or 3 is a key (just after `{` or `,` in an object). */
  let keyNext = false;
  /** The root key just read is `events`. */
  let eventsKey = false;
  /** Inside the array of a root `events` member. */
  let collecting = false;
  let collected = -1;
  /** The entry being read, its start (-1 before its first byte) and whether it is an object. */
  let k = 0;
  let entryStart = -1;
  let entryIsObject = false;
  /** The last `{` or `,` at the entry's top level, and the start of a device_id member being read. */
  let separator = -1;
  let deviceFrom = -1;

  // Every string is closed before the text ends (JSON.parse read it), so the loop that skips one
  // looks for its closing quote only; a string opened at or escaping past the last quote would
  // run off the end, and means the text is not JSON after all. Strings are most of the text, and
  // are skipped four bytes at a time where four are left: a word with no quote and no backslash
  // is passed whole, else the loop goes to the first of them. The test is the classic one for a
  // zero byte, (x - 0x01010101) & ~x & 0x80808080 on the word XOR the byte repeated: its lowest
  // set bit is exact (a higher one may be a borrow), and the lowest is all it is used for.
  const lastQuote = text.lastIndexOf(QUOTE);
  const words = new DataView(text.buffer, text.byteOffset, text.length);
  const lastWord = end - 4;
  for (let i = 0; i < end; i++) {
    const c = text[i];
    // Never undefined below `end`: V8 compiles the check away.
    if (c === undefined) break;
    // Digits, `:`, `-` and `.`: most bytes outside strings, and they matter only as an entry's first.
    if (c > COMMA && c < OPEN_BRACKET && depth !== 2) continue;
    if (c === QUOTE) {
      const from = i;
      if (from >= lastQuote) return undefined;
      let escaped = false;
      i++;
      for (;;) {
        if (i <= lastWord) {
          const word = words.getInt32(i, true);
          const quote = word ^ 0x22222222;
          const backslash = word ^ 0x5c5c5c5c;
          const found = (((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080;
          if (found === 0) {
            i += 4;
            continue;
          }
          i += (31 - Math.clz32(found & -found)) >> 3;
        }
        const b = text[i];
        if (b === QUOTE) break;
        if (b === BACKSLASH) {
          escaped = true;
          if (++i >= lastQuote) return undefined;
        }
        i++;
      }
      if (collecting && depth === 2 && entryStart < 0) {
        k = begin(spans, flags, depths, k, count, from);
        entryStart = from;
        entryIsObject = false;
      } else if (keyNext) {
        if (depth === 1) {
          if (escaped) return undefined;
          eventsKey = matches(text, from, i, EVENTS);
        } else if (collecting && depth === 3 && k < count) {
          if (escaped) flag(flags, k, ESCAPED_KEY);
          else if (matches(text, from, i, DEVICE_ID)) {
            if (deviceFrom >= 0 || hasCut(spans, k)) flag(flags, k, REPEATED_DEVICE_ID);
            // A member after another goes with the comma before it; the first with the comma after.
            deviceFrom = text[separator] === COMMA ? separator : from;
          }
        }
      }
      keyNext = false;
      continue;
    }
    switch (c) {
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (collecting && depth === 2) {
          k = begin(spans, flags, depths, k, count, i);
          entryStart = i;
          entryIsObject = c === OPEN_BRACE;
        } else if (depth === 1 && c === OPEN_BRACKET && eventsKey) {
          // A later `events` member replaces an earlier one, as in JSON.parse.
          collecting = true;
          k = 0;
          entryStart = -1;
        }
        depth++;
        if (collecting && depth > 2 && k < count) {
          const deepest = depths[k];
          if (deepest !== undefined && depth - 2 > deepest) depths[k] = depth - 2;
        }
        if (c === OPEN_BRACE && (depth === 1 || (collecting && depth === 3))) {
          keyNext = true;
          separator = i;
        }
        break;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        if (collecting && depth === 3 && deviceFrom >= 0) {
          cut(spans, k, count, deviceFrom, i);
          deviceFrom = -1;
        }
        depth--;
        keyNext = false;
        if (collecting && depth === 1) {
          if (entryStart >= 0) finish(text, spans, k++, count, i);
          collecting = false;
          collected = k;
        }
        break;
      case COMMA:
        if (collecting && depth === 2) {
          finish(text, spans, k++, count, i);
          entryStart = -1;
        } else if (depth === 1) {
          keyNext = true;
          eventsKey = false;
        } else if (collecting && depth === 3 && entryIsObject) {
          if (deviceFrom >= 0) {
            cut(spans, k, count, deviceFrom, text[deviceFrom] === COMMA ? i : i + 1);
            deviceFrom = -1;
          }
          keyNext = true;
          separator = i;
        }
        break;
      case LINE_FEED:
      case CARRIAGE_RETURN:
        if (collecting && depth >= 3 && k < count) flag(flags, k, MULTI_LINE);
        break;
      default:
        // The first byte of a number, true, false or null entry (whitespace is at or below space).
        if (collecting && depth === 2 && entryStart < 0 && c > SPACE) {
          k = begin(spans, flags, depths, k, count, i);
          entryStart = i;
          entryIsObject = false;
        }
    }
  }
  return collected === count ? { text, spans, flags, depths } : undefined;
}

function begin(spans: number[], flags: number[], depths: number[], k: number, count: number, at: number): number {
  if (k < count) {
    spans[4 * k] = at;
    spans[4 * k + 2] = -1;
    spans[4 * k + 3] = -1;
    flags[k] = 0;
    depths[k] = 0;
  }
  return k;
}

/** The entry ends before the `,` or `]` at `at`, without the whitespace before it. */
function finish(text: Uint8Array, spans: number[], k: number, count: number, at: number): void {
  const start = spans[4 * k];
  if (k >= count || start === undefined) return;
  let last = at;
  for (; last > start; last--) {
    const byte = text[last - 1];
    if (byte === undefined || byte > SPACE) break;
  }
  spans[4 * k + 1] = last;
}

function cut(spans: number[], k: number, count: number, from: number, to: number): void {
  if (k >= count || hasCut(spans, k)) return;
  spans[4 * k + 2] = from;
  spans[4 * k + 3] = to;
}

/** Sets a flag of entry k (begin gave it 0). */
function flag(flags: number[], k: number, bit: number): void {
  const now = flags[k];
  if (now !== undefined) flags[k] = now | bit;
}

/** Entry k has a device_id member to cut already. */
function hasCut(spans: readonly number[], k: number): boolean {
  const from = spans[4 * k + 2];
  return from !== undefined && from >= 0;
}

/** The string token from `from` to the closing quote at `to` is exactly `word` (quotes included). */
function matches(text: Uint8Array, from: number, to: number, word: readonly number[]): boolean {
  if (to - from + 1 !== word.length) return false;
  for (let j = 1; j < word.length - 1; j++) if (text[from + j] !== word[j]) return false;
  return true;
}
