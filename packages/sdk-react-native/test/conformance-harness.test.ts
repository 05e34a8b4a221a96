import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CREDENTIALS, World } from '../../sdk-core/test/world';
import { reactNativeHarness } from './conformance-harness';

// The harness against a real HTTP server: the core's in-memory service (signatures checked with
// node:crypto, each event_id stored once) behind node:http, answering some requests 503 and
// losing some answers, so kills, retries and relaunches all happen over real sockets.
async function serve(world: World) {
  const network = world.ports().network;
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      network({
        url: `http://stand-in${request.url}`,
        method: 'POST',
        headers,
        body: new Uint8Array(Buffer.concat(chunks)),
        timeoutMs: 30_000,
      }).then(
        (answer) => response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body),
        () => response.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('the conformance harness of the React Native SDK', () => {
  it('tracks every event, survives kills mid-send, and resolves with each event stored once under one id', async () => {
    const world = new World();
    world.modes = ['ok', 'unavailable', 'lost_answer', 'ok', 'network_down', 'lost_answer', 'unavailable'];
    const { server, baseUrl } = await serve(world);
    const marks: string[] = [];
    try {
      await reactNativeHarness.run({ baseUrl, ...CREDENTIALS, events: 45, restarts: 3, mark: (name) => marks.push(name) });
    } finally {
      server.close();
    }
    const ids = new Map<unknown, Set<string>>();
    for (const event of world.stored.filter((stored) => stored.event_name === 'conformance_event')) {
      ids.set(event.properties?.seq, (ids.get(event.properties?.seq) ?? new Set()).add(event.event_id));
    }
    expect([...ids.keys()].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 45 }, (_, i) => i));
    expect([...ids.values()].every((set) => set.size === 1)).toBe(true);
    expect(world.stored.filter((stored) => stored.event_name === 'install')).toHaveLength(1);
    expect(world.badSignatures).toBe(0);
    expect(marks).toEqual(['restart', 'restart', 'restart']);
  });

  it('throws when the kit aborts with events still queued', async () => {
    const controller = new AbortController();
    controller.abort();
    const refusing: typeof fetch = async () => new Response('{"error":"service_unavailable"}', { status: 503 });
    await expect(
      reactNativeHarness.run({
        baseUrl: 'http://127.0.0.1:9',
        ...CREDENTIALS,
        events: 1,
        restarts: 0,
        fetch: refusing,
        signal: controller.signal,
      }),
    ).rejects.toThrow(/aborted by the kit with events still queued/);
  });
});
