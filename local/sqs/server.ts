// The SQS emulator's HTTP side: one POST endpoint that reads an action and its JSON input, has
// the store run it, and answers only once the journal holds the changes it reports.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Journal } from './journal';
import { ERROR_WIRE, type Json, MAX_REQUEST_BYTES, SqsError } from './protocol';
import { SqsStore } from './store';

export interface SqsEmulatorLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface SqsEmulatorOptions {
  /** TCP port; 0 (the default) picks a free port. */
  port?: number;
  /** Interface to bind; defaults to 127.0.0.1 so the emulator is never exposed by accident. */
  host?: string;
  /**
   * When set, state is persisted under dataDir and reloaded on start: every change is appended to
   * `sqs.log` before the request that made it is answered, and folded into `sqs.json` on start,
   * on close and when the log grows large. Only one emulator may use a dataDir at a time (the
   * local runtime's lock, lockDataDir in emulators.ts, sees to it).
   */
  dataDir?: string;
  /** Region used in queue ARNs; defaults to us-east-1. */
  region?: string;
  /** Optional sink for lifecycle and failure messages; the emulator is silent without it. */
  logger?: SqsEmulatorLogger;
  /**
   * Clock in epoch milliseconds; defaults to Date.now. Tests pass a shifted clock to exercise
   * retention and message ages without waiting for days. Timers still run in real time.
   */
  now?: () => number;
  /**
   * Messages in flight per queue before ReceiveMessage answers OverLimit; SQS's 120,000 unless a
   * test asks for fewer, to reach the limit without receiving 120,000 messages.
   */
  maxInFlightMessages?: number;
}

export interface SqsEmulator {
  /** Endpoint to give to the SDK (`new SQSClient({ endpoint })`). */
  readonly url: string;
  readonly port: number;
  readonly region: string;
  readonly accountId: string;
  queueUrl(queueName: string): string;
  queueArn(queueName: string): string;
  /**
   * Age in whole seconds of the oldest message in the queue (0 when empty), like CloudWatch's
   * ApproximateAgeOfOldestMessage. For a dead-letter queue it counts from when the message was
   * moved there, as CloudWatch does. Throws if the queue does not exist.
   */
  oldestMessageAgeSeconds(queueName: string): number;
  /** Folds the change log into the snapshot now (no-op without dataDir). */
  flush(): Promise<void>;
  /** Answers pending long polls, stops the server and writes the snapshot. */
  close(): Promise<void>;
}

export class SqsEmulatorServer {
  private readonly server: Server;
  private readonly logger: SqsEmulatorLogger | undefined;
  private readonly store: SqsStore;
  private readonly journal: Journal | undefined;

  constructor(
    private readonly options: SqsEmulatorOptions,
    readonly region: string,
  ) {
    const now = options.now ?? Date.now;
    this.logger = options.logger;
    this.store = new SqsStore(region, now, options.maxInFlightMessages);
    if (options.dataDir) this.journal = new Journal(options.dataDir, now, () => this.store.snapshot(), options.logger);
    this.store.journal = this.journal;
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<void> {
    if (this.journal) {
      this.store.restore(await this.journal.load());
      await this.journal.replay((record) => this.store.apply(record));
      this.store.releaseHeldMessages();
      // Fold what the last run logged into the snapshot, then log this run's changes afresh.
      this.journal.compact();
    }
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    // A wildcard bind is not an address a client can dial, so advertise loopback in URLs.
    const advertised = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    this.store.baseUrl = `http://${advertised}:${this.port}`;
    this.logger?.info(`SQS emulator listening on ${this.store.baseUrl}`);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return this.store.baseUrl;
  }

  queueUrl(name: string): string {
    return this.store.queueUrl(name);
  }

  queueArn(name: string): string {
    return this.store.queueArn(name);
  }

  oldestMessageAgeSeconds(name: string): number {
    return this.store.oldestMessageAgeSeconds(name);
  }

  /** Folds the change log into the snapshot now (no-op without dataDir). */
  flush(): Promise<void> {
    try {
      this.journal?.compact();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async close(): Promise<void> {
    // Pending long polls would otherwise hold their connections open until WaitTimeSeconds ends.
    this.store.close();
    // Let those answers reach their sockets before connections are torn down.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      // SDK clients keep connections alive; without this close() would wait for them to time out.
      this.server.closeAllConnections();
    });
    this.journal?.close();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = randomUUID();
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      try {
        if (req.method !== 'POST') throw new SqsError('UnsupportedOperation', `Method ${String(req.method)} is not supported; use POST.`);
        if (tooLarge) throw new SqsError('InvalidParameterValue', `Request body exceeds ${MAX_REQUEST_BYTES} bytes.`);
        const target = req.headers['x-amz-target'];
        if (typeof target !== 'string' || !target.startsWith('AmazonSQS.')) {
          // Most likely an old SDK speaking the query protocol (form-encoded Action=...).
          throw new SqsError(
            'UnsupportedOperation',
            'Missing or invalid X-Amz-Target header; only the AWS JSON 1.0 protocol is supported.',
          );
        }
        const input = this.parseBody(Buffer.concat(chunks));
        const action = target.slice('AmazonSQS.'.length);
        const result = this.store.dispatch(action, input, res);
        if (result instanceof Promise) {
          result.then(
            (output) => this.answer(res, requestId, output),
            (error: unknown) => this.sendError(res, requestId, error),
          );
        } else {
          this.answer(res, requestId, result);
        }
      } catch (error) {
        this.sendError(res, requestId, error);
      }
    });
  }

  private parseBody(body: Buffer): Json {
    if (body.length === 0) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new SqsError('SerializationException', 'The request body is not valid JSON.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new SqsError('SerializationException', 'The request body must be a JSON object.');
    }
    return parsed as Json;
  }

  /** A success is answered only once the changes it reports are in the log. */
  private answer(res: ServerResponse, requestId: string, output: Json): void {
    try {
      this.journal?.commit();
    } catch (error) {
      this.logger?.error(`SQS emulator failed to log changes to ${this.journal?.file}: ${String(error)}`);
      this.sendError(res, requestId, error);
      return;
    }
    this.send(res, requestId, 200, output);
  }

  private send(res: ServerResponse, requestId: string, status: number, body: Json, extraHeaders: Record<string, string> = {}): void {
    if (res.writableEnded || res.destroyed) return;
    const payload = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(payload),
      'x-amzn-requestid': requestId,
      ...extraHeaders,
    });
    res.end(payload);
  }

  private sendError(res: ServerResponse, requestId: string, error: unknown): void {
    let sqsError: SqsError;
    if (error instanceof SqsError) {
      sqsError = error;
    } else {
      // Only a bug in the emulator gets here; bad input is always an SqsError.
      this.logger?.error(`SQS emulator internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      sqsError = new SqsError('InternalFailure', 'The request processing has failed because of an unknown error.');
    }
    const wire: { queryCode: string; status: number } = ERROR_WIRE[sqsError.code];
    const fault = wire.status >= 500 ? 'Receiver' : 'Sender';
    this.send(
      res,
      requestId,
      wire.status,
      { __type: `com.amazonaws.sqs#${sqsError.code}`, message: sqsError.message },
      { 'x-amzn-query-error': `${wire.queryCode};${fault}` },
    );
  }
}
