import { Agent, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from '../../../local/close-server';

describe('closeServer', () => {
  it('answers the request in flight, then closes without waiting out the keep-alive', async () => {
    const server = createServer((_request, response) => setTimeout(() => response.end('answered'), 300));
    server.keepAliveTimeout = 60_000;
    server.headersTimeout = 61_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ keepAlive: true });
    const answer = new Promise<string>((resolve, reject) => {
      get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, agent }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(body));
      }).on('error', reject);
    });
    await new Promise((resolve) => setTimeout(resolve, 100));

    let closed = false;
    const closing = closeServer(server).then(() => (closed = true));
    expect(await answer).toBe('answered');
    // Plain server.close() would still be waiting here, for the kept-alive socket (60 s).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
    clearTimeout(timer);
    agent.destroy();
    server.closeAllConnections();
    expect(closed).toBe(true);
  });
});
