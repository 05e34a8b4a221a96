/** A cost CSV cut for the console's requests (no DOM here: the unit tests run it in Node). */

/**
 * The console server takes request bodies of at most 64 KiB: a CSV is sent in parts of whole
 * lines, each under this many bytes once JSON-escaped, each with the header, to `cost import`.
 */
const PART_BYTES = 48 * 1024;

export interface CsvPart {
  /** The header and some of the lines under it. */
  readonly csv: string;
  /** The line number the part's header takes, so its rows keep their line numbers in the file. */
  readonly firstLine: number;
}

/**
 * A CSV cut into parts of whole lines under maxBytes each (a line alone over it is a part of its
 * own: the server refuses it, and says so). A quoted value spanning lines would be cut: cost
 * exports have none.
 */
export function csvParts(text: string, maxBytes = PART_BYTES): CsvPart[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const [header = '', ...rows] = lines;
  const size = (line: string) => new TextEncoder().encode(JSON.stringify(line)).length;
  const parts: CsvPart[] = [];
  let current: string[] = [];
  let bytes = size(header);
  // Line 1 is the header and rows[i] line i + 2: a part whose first row is rows[i] numbers its header i + 1.
  let firstRow = 0;
  rows.forEach((line, i) => {
    if (current.length > 0 && bytes + size(line) > maxBytes) {
      parts.push({ csv: [header, ...current].join('\n'), firstLine: firstRow });
      current = [];
      bytes = size(header);
    }
    if (current.length === 0) firstRow = i + 1;
    current.push(line);
    bytes += size(line);
  });
  if (current.some((line) => line.trim() !== '')) parts.push({ csv: [header, ...current].join('\n'), firstLine: firstRow });
  return parts;
}
