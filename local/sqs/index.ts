// A small SQS emulator for local development and integration tests.
//
// It speaks the AWS JSON 1.0 protocol exactly as the current @aws-sdk/client-sqs sends it
// (POST /, `X-Amz-Target: AmazonSQS.<Action>`, `Content-Type: application/x-amz-json-1.0`), so the
// service code runs unchanged against it: only the client's `endpoint` differs. It deliberately
// covers standard queues only; FIFO queues, tags, KMS and permissions are out of scope.
//
// Behaviour follows real SQS where it matters to the application: visibility timeouts, receive
// counts, redrive to a dead-letter queue on the (maxReceiveCount + 1)-th receive, long polling
// that returns as soon as a message is available, retention, and MD5 digests that the SDK
// validates on every send and receive. One difference is deliberate: on start from a data
// directory, messages a consumer of the last run held are visible at once (releaseHeldMessages).
//
// Only node built-ins are used, so it starts in milliseconds and needs no Docker.
//
// The parts: protocol.ts (the wire: limits, errors, input readers, digests, receipt handles),
// store.ts (queues and messages, the actions), journal.ts (state on disk) and server.ts (HTTP).
// README.md says what is emulated, what is not, and which tests hold it to that.

import { SQS_EMULATOR_ACCOUNT_ID } from './protocol';
import { type SqsEmulator, type SqsEmulatorOptions, SqsEmulatorServer } from './server';

export { SQS_EMULATOR_ACCOUNT_ID } from './protocol';
export type { SqsEmulator, SqsEmulatorLogger, SqsEmulatorOptions } from './server';

// Defined here rather than re-exported: a re-export is a getter that jest.spyOn cannot replace,
// and the fault tests (test/support/faults.ts) watch this function to restart the emulator.
/** Starts the emulator and resolves once it accepts connections. */
export async function startSqsEmulator(options: SqsEmulatorOptions = {}): Promise<SqsEmulator> {
  const server = new SqsEmulatorServer(options, options.region ?? 'us-east-1');
  await server.start();
  return {
    url: server.url,
    port: server.port,
    region: server.region,
    accountId: SQS_EMULATOR_ACCOUNT_ID,
    queueUrl: (name) => server.queueUrl(name),
    queueArn: (name) => server.queueArn(name),
    oldestMessageAgeSeconds: (name) => server.oldestMessageAgeSeconds(name),
    flush: () => server.flush(),
    close: () => server.close(),
  };
}
