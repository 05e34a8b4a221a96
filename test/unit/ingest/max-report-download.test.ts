import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { download } from '../../../functions/adapters/max-report';
import { MaxPullError } from '../../../functions/domain/ingest/max-pull';

/**
 * The MAX pull's downloads against a server on 127.0.0.1 that misbehaves as a remote might: an
 * answer past the cap (declared, or streamed without a length), a refusal. Each is the documented
 * failure, never the whole body held.
 */

let server: Server;
let base: string;
let sentBytes = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/refused') {
      response.writeHead(500).end('down');
      return;
    }
    if (request.url === '/declared') {
      response.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000));
      return;
    }
    if (request.url === '/streamed') {
      // No length: chunks until the client goes away, so only the cap stops the read.
      response.writeHead(200, { 'content-type': 'text/csv' });
      const timer = setInterval(() => {
        sentBytes += 1024;
        response.write('y'.repeat(1024));
        if (sentBytes > 1024 * 1024) {
          clearInterval(timer);
          response.end();
        }
      }, 1);
      response.on('close', () => clearInterval(timer));
      return;
    }
    response.writeHead(200).end('Date,User ID\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the MAX pull's downloads", () => {
  it('reads an answer within the cap whole', async () => {
    await expect(download(`${base}/ok`, 100)).resolves.toBe('Date,User ID\n');
  });

  it('refuses an answer past the cap, declared or streamed, without reading it all', async () => {
    await expect(download(`${base}/declared`, 4096)).rejects.toThrow(/^report_too_large/);
    await expect(download(`${base}/streamed`, 8 * 1024)).rejects.toThrow(/^report_too_large/);
    expect(sentBytes).toBeLessThan(1024 * 1024);
  });

  it('says a status other than 2xx, or no answer, is report_refused', async () => {
    await expect(download(`${base}/refused`, 100)).rejects.toEqual(expect.any(MaxPullError));
    await expect(download(`${base}/refused`, 100)).rejects.toThrow(/^report_refused: status 500/);
    await expect(download('http://127.0.0.1:1/none', 100)).rejects.toThrow(/^report_refused: no answer/);
  });
});
