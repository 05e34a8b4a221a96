import { formatWithOptions } from 'node:util';

/**
 * Every line this process writes while a capture is on: process.stdout and process.stderr (where
 * Powertools' logger and metrics write, through a Console of their own) and the global console
 * (which Jest replaces, and which Powertools uses under POWERTOOLS_DEV). Nothing reaches the
 * terminal while capturing; `restore()` puts everything back.
 */
export interface LogCapture {
  lines(): string[];
  /** Each line with what `attribute` said when its first byte was written (undefined without it). */
  attributed(): { line: string; attribution: string | undefined }[];
  restore(): void;
}

export interface CaptureOptions {
  /** Asked at each write, in the writer's own async context (say, which local function is running). */
  attribute?: () => string | undefined;
}

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

export function captureLogs(options: CaptureOptions = {}): LogCapture {
  const chunks: { text: string; attribution: string | undefined }[] = [];
  const record = (chunk: unknown) =>
    chunks.push({
      text: typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk),
      attribution: options.attribute?.(),
    });

  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  for (const stream of streams) {
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      record(chunk);
      const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
      callback?.();
      return true;
    }) as typeof stream.write;
  }

  const consoleMethods = CONSOLE_METHODS.map((name) => console[name]);
  for (const name of CONSOLE_METHODS) {
    console[name] = (...args: unknown[]) => {
      record(`${formatWithOptions({ depth: 10 }, ...args)}\n`);
    };
  }

  const attributed = () => {
    const lines: { line: string; attribution: string | undefined }[] = [];
    let open: { line: string; attribution: string | undefined } | undefined;
    for (const { text, attribution } of chunks) {
      const parts = text.split('\n');
      parts.forEach((part, i) => {
        // A line belongs to the write of its first byte (an empty write starts nothing).
        if (part.length > 0) {
          open ??= { line: '', attribution };
          open.line += part;
        }
        if (i < parts.length - 1 && open) {
          lines.push(open);
          open = undefined;
        }
      });
    }
    if (open) lines.push(open);
    return lines;
  };

  return {
    lines: () => attributed().map(({ line }) => line),
    attributed,
    restore: () => {
      for (const [i, stream] of streams.entries()) stream.write = writes[i];
      for (const [i, name] of CONSOLE_METHODS.entries()) console[name] = consoleMethods[i];
    },
  };
}
