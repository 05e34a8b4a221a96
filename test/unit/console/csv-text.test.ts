// The console's CSV downloads (console/ui/csv-text.ts, every page's one writer): no cell a
// spreadsheet would run as a formula. OWASP's list of leading characters: = + - @ tab and
// carriage return (issue 36: tab and carriage return got through, and a click's sub1 to sub5,
// anybody's to set, reach the Raw data page's CSV).

import fc from 'fast-check';
import { toCsv } from '../../../console/ui/csv-text';
import { parseCsv } from '../../support/parse-csv';

const OWASP_LEADS = ['=', '+', '-', '@', '\t', '\r'];

/** What a spreadsheet reads of one cell: the field, unquoted. */
const cellOf = (value: string | number): string => parseCsv(toCsv([{ sub1: value }]))[1]?.[0] ?? '';

describe('a CSV cell', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+cmd', "'+cmd"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', "'\r=1+1"],
    ['\t5', "'\t5"],
    ['-5', '-5'],
    ['plain', 'plain'],
  ])('writes %j as %j', (text, written) => {
    expect(cellOf(text)).toBe(written);
  });

  it('keeps numbers as they are', () => {
    expect(cellOf(-12.5)).toBe('-12.5');
  });

  it('never starts with a formula character unless it is a number, whatever the text', () => {
    const text = fc.oneof(
      fc.string(),
      fc.tuple(fc.constantFrom(...OWASP_LEADS), fc.string()).map(([lead, rest]) => lead + rest),
    );
    fc.assert(
      fc.property(text, (value) => {
        const cell = cellOf(value);
        const lead = cell.charAt(0);
        if (OWASP_LEADS.includes(lead)) {
          expect(['\t', '\r']).not.toContain(lead);
          expect(Number.isNaN(Number(cell))).toBe(false);
        }
        // Nothing is lost: the text is the cell, or the cell less its quote.
        expect([value, `'${value}`]).toContain(cell);
      }),
      { numRuns: 2000 },
    );
  });
});
