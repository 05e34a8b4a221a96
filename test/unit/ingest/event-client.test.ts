import { gunzipSync } from 'node:zlib';
import { type AppCredentials, EventApiRequestError, EventClient, eventBatchRequest, signedRequest } from '../../../client/event-client';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';
import { isValidSignature } from '../../../functions/domain/ingest/signature';
import { newAppKey, newCompanyKey, newSigningSecret } from '../../../functions/domain/tenants/keys';
import { validEvent } from '../../integration/ingest-support';

const credentials: AppCredentials = { companyKey: newCompanyKey(), appKey: newAppKey(), signingSecret: newSigningSecret() };

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** An answer of the script, or a function that makes it from the request. */
type Answer = Response | Error | ((request: Sent) => Response);

/** A fetch that answers from a script and records what it was sent. */
function scriptedFetch(answers: Answer[]) {
  const sent: Sent[] = [];
  const fetchFn = (async (url: URL, init: RequestInit) => {
    const request = { url: String(url), headers: init.headers as Record<string, string>, body: init.body as Buffer };
    sent.push(request);
    const answer = answers.shift();
    if (!answer) throw new Error('no more answers');
    if (answer instanceof Error) throw answer;
    return typeof answer === 'function' ? answer(request) : answer;
  }) as unknown as typeof fetch;
  return { fetchFn, sent };
}

const reply = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const ok = { accepted: 1, rejected: 0, results: [{ event_id: 'e', status: 'accepted' }], audit_key: 'audit/x.jsonl.gz' };

const T0 = Date.UTC(2025, 5, 1, 8, 0);

/** The client on a scripted fetch and a device clock that starts at T0 and moves only while the client waits. */
function client(answers: Answer[], maxAttempts = 4, options: { offlineMs?: number } = {}) {
  const { fetchFn, sent } = scriptedFetch(answers);
  const waits: number[] = [];
  const clock = { ms: T0 };
  const instance = new EventClient({
    ...credentials,
    baseUrl: 'http://service.test',
    fetch: fetchFn,
    now: () => clock.ms,
    sleep: async (ms) => {
      waits.push(ms);
      clock.ms += options.offlineMs ?? ms;
    },
    random: () => 0.5,
    retry: { maxAttempts, baseDelayMs: 100, maxDelayMs: 1000 },
  });
  return { instance, sent, waits, clock };
}

const sentAtOf = (request: Sent) => (JSON.parse(request.body.toString()) as { sent_at_ms: number }).sent_at_ms;

describe('event client', () => {
  it('signs the bytes as sent and gzips from 10 events', () => {
    const small = eventBatchRequest(credentials, { events: Array.from({ length: 9 }, () => validEvent()), sent_at_ms: 1 });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(isValidSignature(credentials.signingSecret, small.body, small.headers['x-service-signature'])).toBe(true);

    const large = eventBatchRequest(credentials, { events: Array.from({ length: 10 }, () => validEvent()), sent_at_ms: 1 });
    expect(large.headers['content-encoding']).toBe('gzip');
    expect(isValidSignature(credentials.signingSecret, large.body, large.headers['x-service-signature'])).toBe(true);
    expect(JSON.parse(gunzipSync(large.body).toString()).events).toHaveLength(10);
    expect(large.headers).toMatchObject({ 'x-service-company-key': credentials.companyKey, 'x-service-app-key': credentials.appKey });
  });

  it('sends a batch and returns the typed result', async () => {
    const { instance, sent } = client([reply(200, ok)]);
    const event = validEvent();
    await expect(instance.sendEvents([event], { sentAtMs: 123 })).resolves.toEqual(ok);
    expect(sent[0].url).toBe('http://service.test/event');
    expect(JSON.parse(sent[0].body.toString())).toEqual({ events: [event], sent_at_ms: 123 });
  });

  it('retries 503 and 429 with growing, jittered waits, stamping sent_at_ms and signing the body again at each attempt', async () => {
    const { instance, sent, waits } = client([
      reply(503, { error: 'audit_write_failed' }),
      reply(429, { error: 'cap_exceeded' }),
      new TypeError('fetch failed'),
      reply(200, ok),
    ]);
    const events = [validEvent({}, T0), validEvent({}, T0)];
    await expect(instance.sendEvents(events)).resolves.toEqual(ok);
    expect(sent).toHaveLength(4);
    expect(waits).toEqual([50, 100, 200]);
    // Each attempt is stamped with the clock when it leaves: T0, then after each wait.
    expect(sent.map(sentAtOf)).toEqual([T0, T0 + 50, T0 + 150, T0 + 350]);
    for (const request of sent) {
      expect(isValidSignature(credentials.signingSecret, request.body, request.headers['x-service-signature'])).toBe(true);
      // The same events, in the same order and spelling, so the service de-duplicates them by event_id.
      expect(JSON.parse(request.body.toString()).events).toEqual(events);
    }
    expect(new Set(sent.map((request) => request.headers['x-service-signature'])).size).toBe(4);
  });

  it('keeps the event times of a batch that waited six hours offline: sent_at_ms is when it went out', async () => {
    const HOURS_6 = 6 * 3_600_000;
    // The service's side: the skew correction of the event API (docs/ingestion.md) with the clock
    // when the request arrives, which is the device's clock here (the two agree).
    const service = (request: Sent) => {
      expect(isValidSignature(credentials.signingSecret, request.body, request.headers['x-service-signature'])).toBe(true);
      const body = JSON.parse(request.body.toString()) as { events: unknown[]; sent_at_ms: number };
      const { verdicts } = judgeEvents(body.events, body.sent_at_ms, clock.ms);
      return reply(200, { corrected: verdicts.map((verdict) => verdict.corrected_ts) });
    };
    const { instance, sent, waits, clock } = client([new TypeError('fetch failed'), service], 4, { offlineMs: HOURS_6 });
    // Recorded at T0 and T0 + 1 min, handed to the client at T0 + 2 min, with no network until six hours later.
    const events = [validEvent({ event_id: 'a' }, T0), validEvent({ event_id: 'b' }, T0 + 60_000)];
    clock.ms = T0 + 120_000;

    const answer = (await instance.sendEvents(events)) as unknown as { corrected: number[] };
    expect(waits).toHaveLength(1);
    expect(sent.map(sentAtOf)).toEqual([T0 + 120_000, T0 + 120_000 + HOURS_6]);
    expect(answer.corrected).toEqual([T0, T0 + 60_000]);
  });

  it('caps the wait and stops after the last attempt with the last answer', async () => {
    const { instance, sent, waits } = client(
      Array.from({ length: 6 }, () => reply(503, { error: 'audit_write_failed' })),
      6,
    );
    const error = await instance.sendEvents([validEvent()]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventApiRequestError);
    expect(error).toMatchObject({ status: 503, code: 'audit_write_failed', attempts: 6 });
    expect(sent).toHaveLength(6);
    expect(waits).toEqual([50, 100, 200, 400, 500]);
  });

  it('does not retry a refusal', async () => {
    const { instance, sent } = client([reply(401, { error: 'bad_signature' })]);
    await expect(instance.sendEvents([validEvent()])).rejects.toMatchObject({ status: 401, code: 'bad_signature', attempts: 1 });
    expect(sent).toHaveLength(1);
  });

  it('carries the field a bad_batch_shape names, and none for a refusal that names none', async () => {
    const { instance } = client([reply(400, { error: 'bad_batch_shape', field: 'sent_at_ms' }), reply(401, { error: 'bad_signature' })]);
    const shape = await instance.sendEvents([validEvent()]).catch((e: unknown) => e);
    expect(shape).toBeInstanceOf(EventApiRequestError);
    expect(shape).toMatchObject({ status: 400, code: 'bad_batch_shape', field: 'sent_at_ms', attempts: 1 });
    expect((shape as Error).message).toBe('event API answered 400 bad_batch_shape (field sent_at_ms) after 1 attempt(s)');
    const signature = (await instance.sendEvents([validEvent()]).catch((e: unknown) => e)) as EventApiRequestError;
    expect([signature.code, signature.field, signature.message]).toEqual([
      'bad_signature',
      undefined,
      'event API answered 401 bad_signature after 1 attempt(s)',
    ]);
  });

  it('throws the network error when the last attempt cannot connect', async () => {
    const { instance } = client([new TypeError('fetch failed'), new TypeError('fetch failed')], 2);
    await expect(instance.sendEvents([validEvent()])).rejects.toThrow('fetch failed');
  });

  it('asks for a deletion with a signed body and expects 202', async () => {
    const { instance, sent } = client([reply(202, { ok: true, queued: true })]);
    await expect(instance.deleteInstall('0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b')).resolves.toEqual({ ok: true, queued: true });
    expect(sent[0].url).toBe('http://service.test/privacy/delete');
    const expected = signedRequest(credentials, { install_uuid: '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b' });
    expect(sent[0].body.equals(expected.body)).toBe(true);
    expect(sent[0].headers['x-service-signature']).toBe(expected.headers['x-service-signature']);
  });

  it('names a non-JSON failure by its status', async () => {
    const { instance } = client([new Response('Request Entity Too Large', { status: 413 })]);
    await expect(instance.sendEvents([validEvent()])).rejects.toMatchObject({ status: 413, code: 'http_413' });
  });
});
