import { gunzipSync } from 'node:zlib';
import { EventApiRequestError, EventClient, eventBatchRequest, signedRequest, type AppCredentials } from '../../../client/event-client';
import { isValidSignature } from '../../../functions/domain/ingest/signature';
import { newAppKey, newCompanyKey, newSigningSecret } from '../../../functions/domain/tenants/keys';
import { validEvent } from '../../integration/ingest-support';

const credentials: AppCredentials = { companyKey: newCompanyKey(), appKey: newAppKey(), signingSecret: newSigningSecret() };

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** A fetch that answers from a script and records what it was sent. */
function scriptedFetch(answers: (Response | Error)[]) {
  const sent: Sent[] = [];
  const fetchFn = (async (url: URL, init: RequestInit) => {
    sent.push({ url: String(url), headers: init.headers as Record<string, string>, body: init.body as Buffer });
    const answer = answers.shift();
    if (!answer) throw new Error('no more answers');
    if (answer instanceof Error) throw answer;
    return answer;
  }) as unknown as typeof fetch;
  return { fetchFn, sent };
}

const reply = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const ok = { accepted: 1, rejected: 0, results: [{ event_id: 'e', status: 'accepted' }], audit_key: 'audit/x.jsonl.gz' };

function client(answers: (Response | Error)[], maxAttempts = 4) {
  const { fetchFn, sent } = scriptedFetch(answers);
  const waits: number[] = [];
  const instance = new EventClient({
    ...credentials,
    baseUrl: 'http://service.test',
    fetch: fetchFn,
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.5,
    retry: { maxAttempts, baseDelayMs: 100, maxDelayMs: 1000 },
  });
  return { instance, sent, waits };
}

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

  it('retries 503 and 429 with growing, jittered waits, re-sending the same bytes', async () => {
    const { instance, sent, waits } = client([reply(503, { error: 'audit_write_failed' }), reply(429, { error: 'cap_exceeded' }), new TypeError('fetch failed'), reply(200, ok)]);
    await expect(instance.sendEvents([validEvent()])).resolves.toEqual(ok);
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((s) => s.body.toString('hex'))).size).toBe(1);
    expect(new Set(sent.map((s) => s.headers['x-service-signature'])).size).toBe(1);
    expect(waits).toEqual([50, 100, 200]);
  });

  it('caps the wait and stops after the last attempt with the last answer', async () => {
    const { instance, sent, waits } = client(Array.from({ length: 6 }, () => reply(503, { error: 'audit_write_failed' })), 6);
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
