import fc from 'fast-check';
import { csvParts } from '../../../console/ui/cost-csv';

const HEADER = 'date,partner,cost';

describe("the console's cost CSV parts", () => {
  it('keeps every row once, in order, each part under the limit with the header, and each row at its line in the file', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z0-9,é]{1,40}$/), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 80, max: 600 }),
        fc.constantFrom('\n', '\r\n'),
        (rows, maxBytes, newline) => {
          const parts = csvParts([HEADER, ...rows].join(newline), maxBytes);
          const seen: [number, string][] = [];
          for (const part of parts) {
            const [header, ...lines] = part.csv.split('\n');
            expect(header).toBe(HEADER);
            // Over the limit only when one row alone is: the console server then refuses it, and says so.
            if (lines.length > 1) expect(new TextEncoder().encode(JSON.stringify(part.csv)).length).toBeLessThanOrEqual(maxBytes);
            // The part's header is line firstLine, so its k-th row is line firstLine + 1 + k.
            for (const [k, line] of lines.entries()) seen.push([part.firstLine + 1 + k, line]);
          }
          expect(seen).toEqual(rows.map((row, i) => [i + 2, row]));
        },
      ),
    );
  });

  it('makes no part of a file with a header alone', () => {
    expect(csvParts(`${HEADER}\n`)).toEqual([]);
    expect(csvParts(HEADER)).toEqual([]);
  });
});
