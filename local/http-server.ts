import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { REPORT_ATTRIBUTION_PATHS, WELL_KNOWN_PATHS } from '../lib/function-constants';
import { originVerifyHeader, viewerHostHeader } from '../lib/manifest';
import {
  authorizerFromManifest,
  buildEvent,
  FUNCTION_URL_METHODS,
  functionUrlRouteOf,
  matchRoute,
  normalizeResult,
  routesFromManifest,
} from './api-gateway';
import { invoke } from './lambda';

/** API Gateway's own payload limit; each handler enforces its documented, smaller limit itself. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const MAX_DRAIN_BYTES = 4 * MAX_PAYLOAD_BYTES;

export interface EdgeOptions {
  host: string;
  port: number;
  /** Local only: take the client address from X-Forwarded-For and let simulations set country/ASN. */
  trustProxy: boolean;
  /**
   * The secret CloudFront adds so handlers believe its viewer headers (see functions/shared/viewer.ts).
   * Without it the server is API Gateway alone, the execute-api URL a client could call directly:
   * nothing is added or dropped, and the authorizer refuses what lacks the secret.
   */
  originSecret?: string;
  /** The HTTP API's authorizer with its cache (authorizerFromManifest): the runtime's two edges share one API. */
  authorize?: ReturnType<typeof authorizerFromManifest>;
  onError?: (error: unknown) => void;
}

/**
 * Plays CloudFront and API Gateway in front of the handlers: CloudFront's part sets the
 * CloudFront-Viewer-* headers (dropping any the client sent) and the origin secret, and sends a
 * function URL's paths (GET /l/{link_id}) to its function as the URL's event; API Gateway's
 * part routes, runs the origin authorizer and builds the payload-2.0 event.
 */
export interface Edge {
  server: Server;
  url: string;
  /**
   * Stops taking connections, answers the requests in flight with `Connection: close` and closes
   * every idle keep-alive connection at once, so a client holding one cannot keep the runtime up.
   * Resolves when no connection is left; any still open after graceMs are cut.
   */
  shutdown(graceMs?: number): Promise<void>;
  /** Lets requests through: until then they wait, so nothing is answered before the runtime has started. */
  open(): void;
}

export async function startEdge(options: EdgeOptions): Promise<Edge> {
  // The function URL's behaviors are CloudFront's: the API Gateway URL alone (no origin secret) has
  // none of them, and sends their paths to its own routes ($default), as the execute-api URL does.
  const routes = routesFromManifest().filter((route) => options.originSecret !== undefined || route.urlPrefix === undefined);
  // Looked up at each call, as the route's invoke is (tests count invocations through it).
  const authorize = options.authorize ?? authorizerFromManifest((name, event) => invoke(name, event));
  let shuttingDown = false;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const inFlight = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    // Node closes the socket once a response carrying this header has been sent.
    if (shuttingDown) response.setHeader('connection', 'close');
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
    handle(request, response).catch((error: unknown) => {
      options.onError?.(error);
      if (!response.headersSent) send(response, 500, { message: 'Internal Server Error' });
      else response.end();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    await opened;
    const body = await readBody(request, response);
    if (body === undefined) return send(response, 413, { message: 'Request Entity Too Large' });
    const method = (request.method ?? 'GET').toUpperCase();
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    // A function URL's behavior takes GET and HEAD alone; CloudFront answers any other method 403 itself.
    if (functionUrlRouteOf(routes, path) && !FUNCTION_URL_METHODS.has(method)) return send(response, 403, { message: 'Forbidden' });
    const match = matchRoute(routes, method, path);
    if (!match) return send(response, 404, { message: 'Not Found' });

    const socketIp = request.socket.remoteAddress ?? '127.0.0.1';
    const event = buildEvent(request, body, match, socketIp, cloudFrontHeaders(request, options));
    // A function URL has no API Gateway authorizer: Lambda checks CloudFront's signature (OAC), and the handler the origin header.
    const refusal = match.route.urlPrefix === undefined ? await authorize(event) : undefined;
    if (refusal) return send(response, refusal.statusCode, refusal.body);
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
  const shutdown = async (graceMs = 1000) => {
    shuttingDown = true;
    for (const response of inFlight) if (!response.headersSent) response.setHeader('connection', 'close');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, graceMs);
    });
    await Promise.race([closed, grace]);
    clearTimeout(timer);
  };
  return { server, url: `http://${options.host}:${port}`, shutdown, open };
}

/**
 * CloudFront's part: the viewer address and the origin secret it adds, after dropping whatever of
 * its headers a client sent. Nothing without an origin secret (API Gateway alone).
 */
function cloudFrontHeaders(request: IncomingMessage, options: EdgeOptions): Record<string, string> {
  if (options.originSecret === undefined) return {};
  const socketIp = request.socket.remoteAddress ?? '127.0.0.1';
  const viewerIp = options.trustProxy ? (forwardedFor(request) ?? socketIp) : socketIp;
  for (const name of Object.keys(request.headers)) {
    const edgeOwned = name.startsWith('cloudfront-') || name === originVerifyHeader;
    const simulated = options.trustProxy && (name === 'cloudfront-viewer-country' || name === 'cloudfront-viewer-asn');
    if (edgeOwned && !simulated) delete request.headers[name];
  }
  // The CloudFront Function of the /.well-known/* behaviour (lib/constructs/edge.ts): the viewer's
  // Host, in the header the well-known function reads, whatever the client sent in it.
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  // Not on the report-attribution paths, whose behaviours come first and run no function.
  const underPattern = (pattern: string) => path.startsWith(pattern.slice(0, -1));
  const viewerHost: Record<string, string> =
    underPattern(WELL_KNOWN_PATHS) && !REPORT_ATTRIBUTION_PATHS.some(underPattern)
      ? { [viewerHostHeader]: request.headers.host ?? '' }
      : {};
  return {
    ...viewerHost,
    'cloudfront-viewer-address': viewerIp.includes(':')
      ? `[${viewerIp}]:${request.socket.remotePort}`
      : `${viewerIp}:${request.socket.remotePort}`,
    [originVerifyHeader]: options.originSecret,
  };
}

function forwardedFor(request: IncomingMessage): string | undefined {
  const value = request.headers['x-forwarded-for'];
  return clientAddress((Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() ?? '');
}

/**
 * The address in one X-Forwarded-For entry: an IP literal, `[v6]:port` or `v4:port` reduced to the
 * address; anything else (a name, garbage) is undefined, so the socket address is used instead.
 */
export function clientAddress(entry: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry)?.[1];
  if (bracketed !== undefined) return isIP(bracketed) === 6 ? bracketed : undefined;
  if (isIP(entry)) return entry;
  const v4WithPort = /^([\d.]+):\d{1,5}$/.exec(entry)?.[1];
  return v4WithPort !== undefined && isIP(v4WithPort) === 4 ? v4WithPort : undefined;
}

/**
 * The body, or undefined past API Gateway's limit. The rest of an oversized body is still read
 * (and dropped) so the 413 leaves the keep-alive connection usable for the next request, up to a
 * bound past which the connection is closed instead of reading on.
 */
async function readBody(request: IncomingMessage, response: ServerResponse): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_DRAIN_BYTES) {
      response.setHeader('connection', 'close');
      return undefined;
    }
    if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk as Buffer);
  }
  return size > MAX_PAYLOAD_BYTES ? undefined : Buffer.concat(chunks);
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
