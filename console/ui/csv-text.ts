/** RFC 4180 CSV of report rows: a header of the columns, every field quoted when it needs to be. DOM-free. */
export function toCsv(rows: readonly Record<string, string | number | boolean>[]): string {
  const [first] = rows;
  if (first === undefined) return '';
  const columns = Object.keys(first);
  const quote = (value: unknown) => {
    const text = String(value ?? '');
    const safe = startsFormula(text) ? `'${text}` : text;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [columns.join(','), ...rows.map((row) => columns.map((column) => quote(row[column])).join(','))].join('\r\n') + '\r\n';
}

/**
 * A text a spreadsheet would take for a formula (OWASP, "CSV Injection"): a leading =, +, - or @
 * (a number such as -5 excepted), or a leading tab or carriage return, which some spreadsheets
 * skip before reading the rest as a formula (issue 36: a click's sub1 to sub5 are the public's).
 * It is written with a leading quote, kept as text.
 */
export const startsFormula = (text: string): boolean => /^[\t\r]/.test(text) || (/^[=+\-@]/.test(text) && Number.isNaN(Number(text)));
