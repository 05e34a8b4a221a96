import { formatWithOptions } from 'node:util';

/**
 * Every line this process writes while a capture is on: process.stdout and process.stderr (where
 * Powertools' logger and metrics write, through a Console of their own) and the global console
 * (which Jest replaces, and which Powertools uses under POWERTOOLS_DEV). Nothing reaches the
 * terminal while capturing; `restore()` puts everything back.
 */
export interface LogCapture {
  lines(): string[];
  restore(): void;
}

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

export function captureLogs(): LogCapture {
  const chunks: string[] = [];
  const record = (chunk: unknown) => chunks.push(typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));

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

  return {
    lines: () => chunks.join('').split('\n').filter((line) => line.length > 0),
    restore: () => {
      streams.forEach((stream, i) => (stream.write = writes[i]));
      CONSOLE_METHODS.forEach((name, i) => (console[name] = consoleMethods[i]));
    },
  };
}
