import { fetchNetwork, KEEPALIVE_MAX_BYTES } from '../src/network';

/** The init each call of a fake fetch was given, answering 200 with an empty result list. */
function fakeFetch(): RequestInit[] {
  const inits: RequestInit[] = [];
  jest.spyOn(globalThis, 'fetch').mockImplementation(async (_url, init) => {
    inits.push(init ?? {});
    return new Response('{"results":[]}', { status: 200 });
  });
  return inits;
}

const post = (bytes: number) => ({
  url: 'https://api.example.com/event',
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: new Uint8Array(bytes),
  timeoutMs: 1_000,
});

afterEach(() => jest.restoreAllMocks());

describe('the web sender (fetch)', () => {
  it('asks for keepalive only while the page is being hidden, and never past the 64 KiB keepalive budget', async () => {
    const inits = fakeFetch();
    let hiding = false;
    const network = fetchNetwork(() => hiding);

    await network(post(2_000));
    hiding = true;
    await network(post(2_000));
    await network(post(KEEPALIVE_MAX_BYTES));
    await network(post(KEEPALIVE_MAX_BYTES + 1));
    await network(post(64 * 1024 + 1));

    expect(inits.map((init) => init.keepalive)).toEqual([false, true, true, false, false]);
    expect(KEEPALIVE_MAX_BYTES).toBeLessThanOrEqual(64 * 1024);
    // No cookies ever: the service wants none, and its CORS answers allow none.
    expect(inits.every((init) => init.credentials === 'omit')).toBe(true);
  });

  it('reads Retry-After from the answer for the core', async () => {
    jest
      .spyOn(globalThis, 'fetch')
      .mockResolvedValue(new Response('{"error":"cap_exceeded"}', { status: 429, headers: { 'retry-after': '7' } }));
    const answer = await fetchNetwork(() => false)(post(10));
    expect(answer).toEqual({ status: 429, headers: { 'retry-after': '7' }, body: '{"error":"cap_exceeded"}' });
  });
});
