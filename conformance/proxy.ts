import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does to one request instead of (or around) passing it to the runtime. */
export type Fault =
  | { readonly kind: 'pass' }
  /** Answered by the proxy, the runtime never sees it. */
  | { readonly kind: 'answer'; readonly status: number; readonly error: string; readonly retryAfterS?: number }
  /** The connection is closed before the runtime sees the request. */
  | { readonly kind: 'drop-before' }
  /** The runtime takes the request; the connection is closed before the SDK hears the answer. */
  | { readonly kind: 'drop-after' }
  /** Passed on, and answered this much later. */
  | { readonly kind: 'slow'; readonly ms: number };

/** One request the SDK sent, as the proxy received it, and what came of it. */
export interface Exchange {
  /** 1 for the first request the proxy received in the scenario. */
  readonly n: number;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body bytes exactly as received. */
  readonly body: Buffer;
  readonly receivedMs: number;
  fault: Fault;
  answeredMs?: number;
  /** The status the SDK heard; undefined when the connection was dropped. */
  heardStatus?: number;
  /** The runtime's answer, when the request reached it (also when the SDK never heard it). */
  runtime?: { readonly status: number; readonly text: string };
  /** Retry-After (seconds) of the answer the SDK heard. */
  retryAfterS?: number;
}

/** An SDK is not to send more than this in one request (the service refuses 1 MiB; a little room for the check). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Control requests of an external SDK's test app, never passed on. */
export const CONTROL_PREFIX = '/_conformance/';

export interface ProxyOptions {
  /** The runtime the proxy passes requests to. */
  readonly upstream: string;
  readonly port: number;
  readonly host?: string;
}

/**
 * The checking proxy an SDK under test points at: every request is recorded with its exact
 * bytes, and the scenario's fault for it decides whether it reaches the runtime and whether the
 * SDK hears the answer. The checks run afterwards, over the record (checks.ts).
 */
export class CheckingProxy {
  exchanges: Exchange[] = [];
  marks: { name: string; ms: number }[] = [];
  /** Answered at GET /_conformance/scenario: what an external SDK needs to run the scenario. */
  scenarioInfo: unknown = {};
  /** Answered at GET /_conformance/status: how far the scenario has come. */
  status: () => unknown = () => ({});
  private fault: (exchange: Exchange, eventAttempt: number) => Fault = () => ({ kind: 'pass' });
  private eventAttempts = 0;
  private doneWaiters: (() => void)[] = [];
  private server?: Server;
  url = '';

  constructor(private readonly options: ProxyOptions) {}

  async start(): Promise<string> {
    const server = createServer((request, response) => {
      this.handle(request, response).catch(() => response.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host ?? '127.0.0.1', resolve);
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    this.url = `http://${this.options.host ?? '127.0.0.1'}:${port}`;
    return this.url;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** A new scenario: an empty record and the scenario's faults. */
  begin(fault: (exchange: Exchange, eventAttempt: number) => Fault, info: unknown): void {
    this.exchanges = [];
    this.marks = [];
    this.eventAttempts = 0;
    this.fault = fault;
    this.scenarioInfo = info;
  }

  /** Resolves when the SDK's test app posts /_conformance/done. */
  done(): Promise<void> {
    return new Promise((resolve) => this.doneWaiters.push(resolve));
  }

  mark(name: string): void {
    this.marks.push({ name, ms: Date.now() });
    if (name === 'done') for (const resolve of this.doneWaiters.splice(0)) resolve();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const receivedMs = Date.now();
    const body = await readBody(request);
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (path.startsWith(CONTROL_PREFIX)) return this.control(request.method ?? 'GET', path.slice(CONTROL_PREFIX.length), response);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = String(value);
    const isEvent = request.method === 'POST' && path === '/event';
    const exchange: Exchange = {
      n: this.exchanges.length + 1,
      method: request.method ?? 'GET',
      path,
      headers,
      body: body ?? Buffer.alloc(0),
      receivedMs,
      fault: { kind: 'pass' },
    };
    this.exchanges.push(exchange);
    if (body === undefined) {
      exchange.heardStatus = 413;
      exchange.answeredMs = Date.now();
      response.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"body_too_large"}');
      return;
    }
    const fault = this.fault(exchange, isEvent ? ++this.eventAttempts : 0);
    exchange.fault = fault;
    if (fault.kind === 'drop-before') {
      exchange.answeredMs = Date.now();
      request.socket.destroy();
      return;
    }
    if (fault.kind === 'answer') {
      const retryAfter: Record<string, string> = fault.retryAfterS === undefined ? {} : { 'retry-after': String(fault.retryAfterS) };
      exchange.heardStatus = fault.status;
      exchange.retryAfterS = fault.retryAfterS;
      exchange.answeredMs = Date.now();
      response.writeHead(fault.status, { 'content-type': 'application/json', ...retryAfter }).end(JSON.stringify({ error: fault.error }));
      return;
    }
    const upstream = await this.forward(request.method ?? 'GET', request.url ?? '/', headers, exchange.body);
    exchange.runtime = { status: upstream.status, text: upstream.text };
    if (fault.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    exchange.answeredMs = Date.now();
    if (fault.kind === 'drop-after') {
      request.socket.destroy();
      return;
    }
    exchange.heardStatus = upstream.status;
    const retryAfter = upstream.headers['retry-after'];
    if (retryAfter !== undefined && /^\d+$/.test(retryAfter)) exchange.retryAfterS = Number(retryAfter);
    response.writeHead(upstream.status, upstream.headers).end(upstream.text);
  }

  private control(method: string, name: string, response: ServerResponse): void {
    if (method === 'GET' && (name === 'scenario' || name === 'status')) {
      const body = name === 'scenario' ? this.scenarioInfo : this.status();
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
      return;
    }
    if (method === 'POST' && /^(mark\/[a-z_]{1,32}|done)$/.test(name)) {
      this.mark(name === 'done' ? 'done' : name.slice('mark/'.length));
      response.writeHead(204).end();
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
  }

  private async forward(method: string, target: string, headers: Record<string, string>, body: Buffer) {
    const passed = Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
    const answer = await fetch(`${this.options.upstream}${target}`, {
      method,
      headers: passed,
      redirect: 'manual',
      ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
    });
    const text = await answer.text();
    const kept: Record<string, string> = {};
    // fetch has decoded the body: its encoding and length headers no longer describe it.
    answer.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') kept[name] = value;
    });
    return { status: answer.status, headers: kept, text };
  }
}

const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade']);

/** The body, or undefined past MAX_BODY_BYTES (what a service may refuse unread). */
async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
