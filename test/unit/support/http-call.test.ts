import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpCall } from '../../support/documented-answers';

// A kept-alive connection the server closes just as the client sends on it is reset, and the
// request never reached a handler: Node's documented remedy is to send it again on a new
// connection. The load suite's one stray "0 ECONNRESET" (CI, stop 48) was this race: a socket
// idle for the server's keepAliveTimeout, reused by the test's agent in the same tick.
describe('httpCall, the reliability suites’ client', () => {
  let server: Server;
  let baseUrl: string;
  const handled: number[] = [];
  beforeAll(async () => {
    const served = new WeakMap<object, number>();
    server = createServer((request, response) => {
      const n = (served.get(request.socket) ?? 0) + 1;
      served.set(request.socket, n);
      // The second request on a connection finds it closed, as at the end of a keep-alive timeout.
      if (n === 2) {
        request.socket.destroy();
        return;
      }
      handled.push(n);
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends a request again on a new connection when a reused one is reset before any answer', async () => {
    expect((await httpCall(baseUrl, { method: 'GET', target: '/a' })).status).toBe(200);
    const again = await httpCall(baseUrl, { method: 'POST', target: '/b', body: Buffer.from('{}') });
    expect(again.status).toBe(200);
    expect(again.text).toBe('ok');
    // Each answer came from a connection's first request: the reset one was never handled.
    expect(handled).toEqual([1, 1]);
  });

  it('does not hide a reset on a new connection', async () => {
    const refusing = createServer((request) => request.socket.destroy());
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
      await expect(httpCall(url, { method: 'GET', target: '/' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    } finally {
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });
});
