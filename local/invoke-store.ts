import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';

/**
 * Lambda's per-invocation store, as its Node.js runtime publishes it (globalThis.awslambda
 * .InvokeStore), for invocations that share one process. In AWS each function has a process of
 * its own and runs one invocation at a time there; locally every function's invocations run in
 * this one process, overlapping, against one Powertools logger and one metrics instance
 * (functions/shared/observability.ts). Powertools keeps its per-invocation state (the Lambda
 * context that names function_name, temporary keys, the log level, stored metrics) in this store
 * when AWS_LAMBDA_MAX_CONCURRENCY is set, as on Lambda Managed Instances, where one process also
 * runs many invocations at once; without it, the last invocation to start named every line.
 * What stays the process's: `cold_start`, true only in the first invocation of whichever
 * function runs first.
 *
 * The package's own store is not asked for (InvokeStore.getInstanceAsync): the first SDK call of
 * the process makes and keeps a single-invocation one unless that variable is in the real
 * environment, and the local runtime makes SDK calls before any function runs.
 */
class LocalInvokeStore extends InvokeStoreBase {
  readonly #storage = new AsyncLocalStorage<Record<string | symbol, unknown>>();

  getContext() {
    return this.#storage.getStore();
  }
  hasContext() {
    return this.#storage.getStore() !== undefined;
  }
  get<T = unknown>(key: string | symbol): T | undefined {
    return this.#storage.getStore()?.[key] as T | undefined;
  }
  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    const store = this.#storage.getStore();
    if (!store) throw new Error('No context available');
    store[key] = value;
  }
  run<T>(context: Record<string | symbol, unknown>, body: () => T): T {
    return this.#storage.run(context, body);
  }
}

/** Set in every function's environment locally (local/function-context.ts); Powertools reads only whether it is set. */
export const LOCAL_MAX_CONCURRENCY = '1000';

const store = new LocalInvokeStore();

/**
 * Runs `body` as one invocation, its request id in the store as Lambda puts it. The store is put
 * in place at each invocation: an SDK call outside any function may have put a store of its own
 * there first.
 */
export function runInvocation<T>(requestId: string, body: () => T): T {
  const global = globalThis as { awslambda?: { InvokeStore?: InvokeStoreBase } };
  global.awslambda ??= {};
  global.awslambda.InvokeStore = store;
  return store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: requestId }, body);
}
