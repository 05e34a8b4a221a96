/**
 * The four bindings the interface names, each checked by a read-only probe. A probe that throws
 * or does not answer within the timeout marks its binding with a short reason; the reason names
 * the kind of failure only, never an endpoint, key or stack.
 */
export const BINDINGS = ['relational_store', 'object_store', 'key_value_store', 'queues'] as const;
export type Binding = (typeof BINDINGS)[number];
export type Probe = (signal: AbortSignal) => Promise<unknown>;

export interface HealthReport {
  status: 'ok' | 'failing';
  bindings: Record<Binding, string>;
}

export async function checkHealth(probes: Record<Binding, Probe>, timeoutMs: number): Promise<HealthReport> {
  const results = await Promise.all(BINDINGS.map((binding) => runProbe(probes[binding], timeoutMs)));
  const bindings = Object.fromEntries(BINDINGS.map((binding, i) => [binding, results[i]])) as Record<Binding, string>;
  return { status: results.every((r) => r === 'ok') ? 'ok' : 'failing', bindings };
}

async function runProbe(probe: Probe, timeoutMs: number): Promise<string> {
  const read = await withDeadline(probe, timeoutMs);
  return 'failure' in read ? read.failure : 'ok';
}

/**
 * One read with a deadline: its value, or a short reason it has none ('timeout', 'unreachable',
 * 'error: <name>'). The probes use it, and so does the operators' health view
 * (operator-health.ts), where each part is read on its own so that one store down leaves the others
 * readable.
 */
export async function withDeadline<T>(
  read: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
): Promise<{ value: T } | { failure: string }> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ failure: string }>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ failure: 'timeout' });
    }, timeoutMs);
  });
  const attempt = read(controller.signal).then(
    (value) => ({ value }),
    (error: unknown) => ({ failure: controller.signal.aborted ? 'timeout' : describeFailure(error) }),
  );
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describeFailure(error: unknown): string {
  const err = error as { name?: string; code?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ENOTFOUND') return 'unreachable';
  return `error: ${err.name && err.name !== 'Error' ? err.name : 'unknown'}`;
}
