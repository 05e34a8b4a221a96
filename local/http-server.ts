import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { originVerifyHeader } from '../lib/manifest';
import { buildEvent, matchRoute, normalizeResult, routesFromManifest } from './api-gateway';
import { invoke } from './lambda';

/** API Gateway's own payload limit; each handler enforces its documented, smaller limit itself. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

export interface EdgeOptions {
  host: string;
  port: number;
  /** Local only: take the client address from X-Forwarded-For and let simulations set country/ASN. */
  trustProxy: boolean;
  /** The secret CloudFront adds so handlers believe its viewer headers (see functions/shared/viewer.ts). */
  originSecret: string;
  onError?: (error: unknown) => void;
}

/**
 * Plays CloudFront and API Gateway in front of the handlers: CloudFront's part sets the
 * CloudFront-Viewer-* headers (dropping any the client sent) and the origin secret; API Gateway's
 * part routes and builds the payload-2.0 event.
 */
export async function startEdge(options: EdgeOptions): Promise<{ server: Server; url: string }> {
  const routes = routesFromManifest();
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.onError?.(error);
      if (!response.headersSent) send(response, 500, { message: 'Internal Server Error' });
      else response.end();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    if (body === undefined) return send(response, 413, { message: 'Request Entity Too Large' });
    const method = (request.method ?? 'GET').toUpperCase();
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const match = matchRoute(routes, method, path);
    if (!match) return send(response, 404, { message: 'Not Found' });

    const socketIp = request.socket.remoteAddress ?? '127.0.0.1';
    const viewerIp = options.trustProxy ? forwardedFor(request) ?? socketIp : socketIp;
    const edgeHeaders: Record<string, string> = {
      'cloudfront-viewer-address': viewerIp.includes(':') ? `[${viewerIp}]:${request.socket.remotePort}` : `${viewerIp}:${request.socket.remotePort}`,
      [originVerifyHeader]: options.originSecret,
    };
    for (const name of Object.keys(request.headers)) {
      const edgeOwned = name.startsWith('cloudfront-') || name === originVerifyHeader;
      const simulated = options.trustProxy && (name === 'cloudfront-viewer-country' || name === 'cloudfront-viewer-asn');
      if (edgeOwned && !simulated) delete request.headers[name];
    }
    const event = buildEvent(request, body, match, socketIp, edgeHeaders);
    const result = normalizeResult(await invoke(match.route.functionName, event));

    const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
    if (result.cookies?.length) headers['set-cookie'] = result.cookies;
    response.writeHead(result.statusCode ?? 200, headers);
    response.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${options.host}:${port}` };
}

function forwardedFor(request: IncomingMessage): string | undefined {
  const value = request.headers['x-forwarded-for'];
  const first = (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
  return first || undefined;
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
