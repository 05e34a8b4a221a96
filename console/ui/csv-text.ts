/** RFC 4180 CSV of report rows: a header of the columns, every field quoted when it needs to be. DOM-free. */
export function toCsv(rows: readonly Record<string, string | number | boolean>[]): string {
  const [first] = rows;
  if (first === undefined) return '';
  const columns = Object.keys(first);
  const quote = (value: unknown) => {
    const text = String(value ?? '');
    // A leading =, +, - or @ would be a formula to a spreadsheet: the text is kept as text.
    const safe = /^[=+\-@]/.test(text) && Number.isNaN(Number(text)) ? `'${text}` : text;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [columns.join(','), ...rows.map((row) => columns.map((column) => quote(row[column])).join(','))].join('\r\n') + '\r\n';
}
