import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** examples/web/ and the web SDK's script-tag build, and nothing else of the repository, on an origin of its own. */
export async function serveExample(): Promise<{ server: Server; origin: string }> {
  const served = ['examples/web/', 'packages/sdk-web/dist/attribution.js'];
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript' };
  const server = createServer(async (request, response) => {
    let path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)).slice(1);
    if (path.endsWith('/')) path += 'index.html';
    const body = served.some((prefix) => path.startsWith(prefix)) ? await readFile(join(ROOT, path)).catch(() => undefined) : undefined;
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
