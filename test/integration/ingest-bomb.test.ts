// A gzip bomb against POST /event through the local edge: refused with 413 decompressed_too_large,
// and the process (edge, handler and all) never holds more than about the
// 8 MiB cap of inflated bytes. Kept in its own file so other tests do not disturb the measurement.

import { gzipSync } from 'node:zlib';
import { signedRequest } from '../../client/event-client';
import { MAX_DECOMPRESSED_BYTES, MAX_RAW_BODY_BYTES } from '../../functions/domain/ingest/event-api';
import { signBody } from '../../functions/domain/ingest/signature';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { credentialsOf, post, validEvent } from './ingest-support';

const MiB = 1024 * 1024;
let stack: LocalStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant({ plan: 'paid' });
});

afterAll(async () => {
  await stack.stop();
});

/** 15 gzip members of 64 MiB of zeros each: 960 MiB inflated from under 1 MiB on the wire. */
function bomb(): Buffer {
  const member = gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
  return Buffer.concat(Array.from({ length: 15 }, () => member));
}

it('refuses a gzip bomb with 413 decompressed_too_large fast and without inflating it in memory', async () => {
  const body = bomb();
  expect(body.length).toBeLessThanOrEqual(MAX_RAW_BODY_BYTES);
  const { headers } = signedRequest(credentialsOf(tenant), {}, { gzip: true });
  const request = { headers: { ...headers, 'x-service-signature': signBody(tenant.app.signing_secret, body) }, body };

  // Warm up: load the handler and fill the key cache, so the measurement is of the bomb alone.
  expect(
    (await post(stack.baseUrl, '/event', signedRequest(credentialsOf(tenant), { events: [validEvent()], sent_at_ms: Date.now() }))).status,
  ).toBe(200);

  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakArrayBuffers = before.arrayBuffers;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers);
  }, 1);
  const answer = await post(stack.baseUrl, '/event', request);
  clearInterval(sampler);

  expect(answer).toEqual({ status: 413, body: { error: 'decompressed_too_large' } });
  // How fast it is refused is a bench figure (gzip_bomb_refused_ms), not a timed test: a wall-clock
  // bound failed on a busy CI machine (1,409 ms against 1,000).
  // Buffers: the 1 MiB body a few times over (edge, event, handler) plus at most the 8 MiB cap.
  expect(peakArrayBuffers - before.arrayBuffers).toBeLessThan(MAX_DECOMPRESSED_BYTES + 16 * MiB);
  // Resident memory: the same, with room for the allocator and the garbage collector.
  expect(peakRss - before.rss).toBeLessThan(MAX_DECOMPRESSED_BYTES + 64 * MiB);
});
