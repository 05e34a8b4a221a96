import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'node:net';
import type { SqsEmulator, SqsEmulatorOptions } from '../../local/sqs';
import * as sqsEmulatorModule from '../../local/sqs';
import type { LocalStack } from './local-stack';

/**
 * Stopping and restarting each emulator of a local stack while traffic flows, for the fault
 * tests. local/emulators.ts exposes stopS3/startS3 only, so the other two are reached here:
 *
 * - S3: the runtime's own stopS3/startS3 (s3rver closes, its open connections cut, and a new one
 *   starts on the same port and directory).
 * - DynamoDB: the HTTP server closed (not dynalite's close, which also closes its LevelDB: an
 *   operation already holding an item lock then throws outside any request) and listening again
 *   on the same port; open keep-alive connections are cut so the service sees the store go away
 *   at once.
 * - SQS: the emulator's own close (journal flushed and compacted), then a new emulator on the
 *   same port and data directory, which loads the queues and messages from disk. The runtime's
 *   call of startSqsEmulator is watched (`watchEmulators()` before the stack starts) to learn
 *   the instance, its options and its port; what it returns delegates close() to the instance
 *   running at the time, so the runtime's own shutdown closes the restarted one.
 */
export type Emulator = 'dynamodb' | 's3' | 'sqs';
export const EMULATORS: readonly Emulator[] = ['dynamodb', 's3', 'sqs'];

export interface EmulatorFaults {
  stop(emulator: Emulator): Promise<void>;
  start(emulator: Emulator): Promise<void>;
  /** Restarts whatever is stopped and removes the watch (call before stack.stop()). */
  restore(): Promise<void>;
}

/** Watches the runtime's SQS emulator; call before startLocalStack, then `faultsOf(stack)`. */
export function watchEmulators(): { faultsOf(stack: LocalStack): EmulatorFaults } {
  const original = sqsEmulatorModule.startSqsEmulator;
  let options: SqsEmulatorOptions | undefined;
  let current: SqsEmulator | undefined;
  const spy = jest.spyOn(sqsEmulatorModule, 'startSqsEmulator').mockImplementation(async (given: SqsEmulatorOptions = {}) => {
    const started = await original(given);
    // A restart must come back where the service's clients and queue URLs point.
    options = { ...given, port: started.port };
    current = started;
    return { ...started, close: async () => current?.close() };
  });

  return {
    faultsOf(stack: LocalStack): EmulatorFaults {
      const dynamoPort = Number(new URL(stack.emulators.dynamodb).port);
      const dynamo = listeningServer(dynamoPort);
      const s3Port = Number(new URL(stack.emulators.s3).port);
      const stopped = new Set<Emulator>();

      const stop = async (emulator: Emulator) => {
        if (stopped.has(emulator)) return;
        stopped.add(emulator);
        if (emulator === 's3') {
          // s3rver's close waits for every open connection, and the service's keep-alive ones
          // stay open while traffic flows: cut them, as a stopped process would.
          const server = listeningServer(s3Port);
          const closing = stack.emulators.stopS3();
          server.closeAllConnections();
          return closing;
        }
        if (emulator === 'sqs') {
          const running = current;
          current = undefined;
          return running?.close();
        }
        await new Promise<void>((resolve) => {
          // The HTTP server's own close, not dynalite's (which also closes its LevelDB): an
          // operation already holding dynalite's item lock would then find the database closed
          // and throw outside any request, failing the test run rather than the request. To the
          // service, a closed port is the same outage either way.
          Server.prototype.close.call(dynamo, () => resolve());
          dynamo.closeAllConnections();
        });
      };

      const start = async (emulator: Emulator) => {
        if (!stopped.has(emulator)) return;
        stopped.delete(emulator);
        if (emulator === 's3') return stack.emulators.startS3();
        if (emulator === 'sqs') {
          if (!options) throw new Error('watchEmulators() was not called before the stack started');
          current = await original(options);
          return;
        }
        await new Promise<void>((resolve, reject) => {
          dynamo.once('error', reject);
          dynamo.listen(dynamoPort, '127.0.0.1', () => {
            dynamo.off('error', reject);
            resolve();
          });
        });
      };

      return {
        stop,
        start,
        restore: async () => {
          for (const emulator of [...stopped]) await start(emulator);
          spy.mockRestore();
        },
      };
    },
  };
}

/** The server listening on a port of this process (dynalite does not hand its server out). */
function listeningServer(port: number): HttpServer {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  const server = handles.find(
    (handle): handle is HttpServer => handle instanceof Server && (handle.address() as AddressInfo | null)?.port === port,
  );
  if (!server) throw new Error(`no server of this process listens on port ${port}`);
  return server;
}
