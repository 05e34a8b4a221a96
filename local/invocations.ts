import { AsyncLocalStorage } from 'node:async_hooks';
import type { InitializeHandler, InitializeHandlerArguments, InitializeMiddleware, MetadataBearer, MiddlewareStack } from '@smithy/types';
import { addClientHook } from '../functions/shared/clients/reusable';

/**
 * The invocations running now, and how the runtime stops them as Lambda stops a function's
 * process: at shutdown, whatever still runs after a short grace is abandoned. From then on none of
 * an abandoned invocation's AWS calls starts, and none it had in flight returns to it: it stops
 * where it was, as if killed, so it writes nothing after the emulators close and logs no error
 * about stores it can no longer reach. The calls it had in flight are waited for, so each lands
 * whole before the emulators close. Its queue messages stay held and come back; the aggregation's
 * exactly-once protocol takes a stop after any single write (docs/aggregation.md), and every other
 * consumer and handler already survives a crashed invocation.
 */
interface Invocation {
  abandoned: boolean;
  /** Its AWS calls in flight, each as a promise that settles without rejecting. */
  readonly calls: Set<Promise<unknown>>;
}

const current = new AsyncLocalStorage<Invocation>();
const running = new Set<Invocation>();
let accepting = true;
/** Where an abandoned invocation waits, for ever. */
const stopped = new Promise<never>(() => undefined);

/** Runs `body` as one invocation that abandonInvocations can stop; once they are abandoned, a new one never starts. */
export async function trackInvocation<T>(body: () => Promise<T>): Promise<T> {
  if (!accepting) return stopped;
  installGate();
  const invocation: Invocation = { abandoned: false, calls: new Set() };
  running.add(invocation);
  try {
    return await current.run(invocation, body);
  } finally {
    running.delete(invocation);
  }
}

/**
 * Abandons every invocation still running, and starts no new one until acceptInvocations.
 * Resolves once the AWS calls they had in flight have settled, or after settleMs at most.
 */
export async function abandonInvocations(settleMs = 1000): Promise<void> {
  accepting = false;
  const calls: Promise<unknown>[] = [];
  for (const invocation of running) {
    invocation.abandoned = true;
    calls.push(...invocation.calls);
  }
  running.clear();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(calls), new Promise((resolve) => (timer = setTimeout(resolve, settleMs)))]);
  clearTimeout(timer);
}

/** Starts invocations again: a runtime started in a process where an earlier one stopped. */
export function acceptInvocations(): void {
  accepting = true;
}

const gate: InitializeMiddleware<object, MetadataBearer> =
  (next: InitializeHandler<object, MetadataBearer>) => async (args: InitializeHandlerArguments<object>) => {
    const invocation = current.getStore();
    if (!invocation) return next(args);
    if (invocation.abandoned) return stopped;
    const call = next(args).then(
      (output) => ({ output }),
      (error: unknown) => ({ error }),
    );
    invocation.calls.add(call);
    const result = await call;
    invocation.calls.delete(call);
    if (invocation.abandoned) return stopped;
    if ('error' in result) throw result.error;
    return result.output;
  };

let installed = false;

/** On every AWS client the service builds, as the IAM check is (local/iam-guard.ts). */
function installGate(): void {
  if (installed) return;
  installed = true;
  addClientHook((client) => {
    (client as { middlewareStack: MiddlewareStack<object, MetadataBearer> }).middlewareStack.add(gate, {
      step: 'initialize',
      name: 'localInvocationGate',
      priority: 'high',
      override: true,
    });
  });
}
