/** RFC 4180 CSV of report rows: a header of the columns, every field quoted when it needs to be. */
export function toCsv(rows: readonly Record<string, string | number>[]): string {
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

export function download(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
