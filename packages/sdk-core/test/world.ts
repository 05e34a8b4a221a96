import { createHash, createHmac, randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { HttpRequest, HttpResponse, Ports } from '../src';

/**
 * A device and a service for the core's tests, with time, crashes and the network in the test's
 * hands: a scheduler whose clock only moves when told, a storage that a crash fences off (a dead
 * process writes nothing more), and an in-memory event API that verifies signatures with its own
 * HMAC (node:crypto, not the core's), stores each event_id once, and answers as the test says.
 */
export const SECRET = 'f'.repeat(64);
export const CREDENTIALS = { companyKey: `co_live_${'1'.repeat(32)}`, appKey: `app_live_${'2'.repeat(32)}`, signingSecret: SECRET };

export type Mode = 'ok' | 'lost_answer' | 'network_down' | 'throttled' | 'unavailable' | 'hang';

export interface StoredEvent {
  readonly event_id: string;
  readonly event_name: string;
  readonly install_uuid: string;
  readonly ts_ms: number;
  readonly properties?: Record<string, unknown>;
  readonly [field: string]: unknown;
}

export class World {
  now = 1_800_000_000_000;
  private timers: { at: number; seq: number; run: () => void; live: boolean }[] = [];
  private seq = 0;
  readonly disk = new Map<string, string>();
  generation = 0;
  /** Modes for the next requests, in order; `ok` once they run out. */
  modes: Mode[] = [];
  /** Every event stored, in the order stored; each event_id once. */
  readonly stored: StoredEvent[] = [];
  readonly storedIds = new Set<string>();
  requests = 0;
  badSignatures = 0;
  firstLaunchCalls: Record<string, unknown>[] = [];
  firstLaunchAnswer: unknown = { status: 'not_found', attribution: null, deep_link: null, reason: 'no_click' };
  /** Answers for POST /event other than the modes (status and body), taken first when set. */
  eventAnswers: { status: number; body: unknown }[] = [];
  /** The app's SKAN schema as GET /sdk/v1/skan-schema serves it; undefined answers 404 no_schema. */
  skanSchema: unknown;
  /** Each GET /sdk/v1/skan-schema taken, by its If-None-Match (undefined when none). */
  readonly skanRequests: (string | undefined)[] = [];

  /** The ports of one process: a crash (crash()) makes the ports of every earlier process inert. */
  ports(): Ports {
    const generation = this.generation;
    const alive = () => generation === this.generation;
    return {
      storage: {
        get: async (key) => this.disk.get(key),
        set: async (key, value) => {
          if (alive()) this.disk.set(key, value);
        },
        remove: async (key) => {
          if (alive()) this.disk.delete(key);
        },
      },
      network: (request) => this.serve(request, alive),
      scheduler: {
        now: () => this.now,
        setTimeout: (callback, ms) => {
          if (!alive()) return () => undefined;
          const timer = { at: this.now + Math.max(0, ms), seq: this.seq++, run: callback, live: true };
          this.timers.push(timer);
          return () => {
            timer.live = false;
          };
        },
      },
      platform: { kind: 'android', platform: 'android', appVersion: '1.0.0', randomUuid: () => randomUUID(), random: () => 0.5 },
    };
  }

  /** The process dies: its timers never fire and its writes are lost from here on. */
  crash(): void {
    this.generation++;
    for (const timer of this.timers) timer.live = false;
    this.timers = [];
  }

  /** Lets queued promise callbacks run (the SDK's awaits). */
  async settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** Moves the clock by `ms`, firing the timers that come due, in order, settling after each. */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      await this.settle();
      const due = this.timers.filter((timer) => timer.live && timer.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.live = false;
      this.now = Math.max(this.now, due.at);
      due.run();
    }
    this.now = until;
    this.timers = this.timers.filter((timer) => timer.live);
    await this.settle();
  }

  private async serve(request: HttpRequest, alive: () => boolean): Promise<HttpResponse> {
    this.requests++;
    const mode = this.modes.shift() ?? 'ok';
    await this.settle();
    if (mode === 'network_down') throw new Error('network down');
    if (mode === 'hang') throw new Error('timed out');
    if (mode === 'throttled') return { status: 429, headers: { 'retry-after': '7' }, body: '{"error":"rate_limited"}' };
    if (mode === 'unavailable') return { status: 503, headers: {}, body: '{"error":"service_unavailable"}' };
    const answer = this.handle(request);
    // The service did its work; the answer never reaches the device (or the device died meanwhile).
    if (mode === 'lost_answer' || !alive()) throw new Error('connection reset after the request was taken');
    return answer;
  }

  /** As functions/sdk-skan-schema.ts answers: the schema with a content ETag, 304 when it matches, 404 without one. */
  private skanAnswer(request: HttpRequest): HttpResponse {
    const ifNoneMatch = request.headers['if-none-match'];
    this.skanRequests.push(ifNoneMatch);
    if (request.method !== 'GET' || request.body?.length) return { status: 400, headers: {}, body: '{"error":"bad_request"}' };
    if (this.skanSchema === undefined) return { status: 404, headers: {}, body: '{"error":"no_schema"}' };
    const body = JSON.stringify(this.skanSchema);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    if (ifNoneMatch === etag) return { status: 304, headers: { etag }, body: '' };
    return { status: 200, headers: { etag }, body };
  }

  private handle(request: HttpRequest): HttpResponse {
    const body = request.body ?? new Uint8Array();
    const expected = createHmac('sha256', SECRET).update(body).digest('hex');
    if (request.headers['x-service-signature'] !== expected) {
      this.badSignatures++;
      return { status: 401, headers: {}, body: '{"error":"bad_signature"}' };
    }
    if (request.url.endsWith('/sdk/v1/skan-schema')) return this.skanAnswer(request);
    const text = Buffer.from(request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
    const payload = JSON.parse(text) as { events?: StoredEvent[]; sent_at_ms?: number } & Record<string, unknown>;
    if (request.url.endsWith('/sdk/v1/attribution')) {
      this.firstLaunchCalls.push(payload);
      return { status: 200, headers: {}, body: JSON.stringify(this.firstLaunchAnswer) };
    }
    if (request.url.endsWith('/privacy/delete')) return { status: 202, headers: {}, body: '{"ok":true,"queued":true}' };
    const scripted = this.eventAnswers.shift();
    if (scripted) return { status: scripted.status, headers: {}, body: JSON.stringify(scripted.body) };
    const results = (payload.events ?? []).map((event) => {
      if (!this.storedIds.has(event.event_id)) {
        this.storedIds.add(event.event_id);
        this.stored.push(event);
      }
      return { event_id: event.event_id, status: 'accepted' };
    });
    return { status: 200, headers: {}, body: JSON.stringify({ accepted: results.length, rejected: 0, results, audit_key: 'k' }) };
  }
}
