/** The CSV text is DOM-free (csv-text.ts, unit-tested in node); the download needs the page. */
export { toCsv } from './csv-text';

/** Hands the browser a CSV file to save. */
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
