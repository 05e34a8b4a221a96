import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { type FunctionSpec, functions } from '../lib/manifest';
import { runAsFunction } from './function-context';
import { trackInvocation } from './invocations';
import { runInvocation } from './invoke-store';

/**
 * Runs the very handlers that Lambda runs: each function's entry module from the manifest,
 * loaded on first use (like a cold start) and called with a Lambda-shaped context, as that
 * function: with its environment and its IAM policy only (local/function-context.ts), and as
 * one invocation of its own, however many others overlap it (local/invoke-store.ts), which the
 * runtime abandons if it still runs when the runtime stops (local/invocations.ts).
 */
type Handler = (event: unknown, context: Context) => Promise<unknown>;

const root = join(__dirname, '..');
const loaded = new Map<string, Handler>();

export function functionSpec(name: string): FunctionSpec {
  const spec = (functions as Record<string, FunctionSpec>)[name];
  if (!spec) throw new Error(`no function named ${name} in the manifest`);
  return spec;
}

function handlerOf(name: string): Handler {
  let handler = loaded.get(name);
  if (!handler) {
    // require, not import: each function's module is loaded by its entry path at its first invocation.
    const module = require(join(root, functionSpec(name).entry)) as { handler?: Handler };
    if (typeof module.handler !== 'function') throw new Error(`${functionSpec(name).entry} exports no handler`);
    handler = module.handler;
    loaded.set(name, handler);
  }
  return handler;
}

export async function invoke(name: string, event: unknown): Promise<unknown> {
  const spec = functionSpec(name);
  const timeoutMs = (spec.timeoutSeconds ?? 10) * 1000;
  const deadline = Date.now() + timeoutMs;
  const context: Context = {
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    memoryLimitInMB: String(spec.memoryMb ?? 512),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  return trackInvocation(() => runAsFunction(name, () => runInvocation(context.awsRequestId, () => handlerOf(name)(event, context))));
}
