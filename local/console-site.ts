import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { JwtRsaVerifier } from 'aws-jwt-verify';
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { bundleConsole } from '../console/bundle';
import { consolePage } from '../console/page';
import { consoleUsersPath, LOCAL_POOL_PREFIX } from '../functions/adapters/console-users-file';
import type { ConsoleSignIn } from '../lib/function-environment';
import { normalizeResult } from './api-gateway';
import type { StandInSettings } from './sign-in-stand-in';

/**
 * The deployed console's local stand-in (docs/console.md, "Locally"; lib/constructs/console-site.ts
 * in AWS): one origin serving the console's page and bundle, as the console's distribution serves
 * them from its bucket, and the console API under /api/, where API Gateway's JWT authorizer is
 * played by aws-jwt-verify against the sign-in stand-in's JWKS (issuer, audience = the app client,
 * expiry, signature) before the console-api function runs, as the runtime runs every function.
 */
export interface LocalConsoleSite {
  readonly url: string;
  readonly signIn: ConsoleSignIn;
  close(): Promise<void>;
}

/** The page's app client, as the stand-in registers it. */
export const LOCAL_CLIENT_ID = 'attribution-console';
/** The console API's routes, as the deployed HTTP API has them. */
const ROUTES = new Set(['GET /api/me', 'POST /api/command']);
/** API Gateway's payload limit is 10 MB; the function refuses more than 64 KiB itself, so 1 MiB is plenty to pass it on. */
const MAX_REQUEST_BYTES = 1024 * 1024;

export async function startConsoleSite(options: {
  host: string;
  port: number;
  dataDir: string;
  baseUrl: string;
  invoke: (name: string, event: unknown) => Promise<unknown>;
  /** Gives the console API's function its sign-in variables, before the first request reaches it. */
  register: (signIn: ConsoleSignIn) => void;
  /**
   * Aborted when the runtime stops: a site still starting then stops its stand-in and rejects, so a
   * stand-in that never gets ready cannot keep the runtime from stopping.
   */
  signal?: AbortSignal;
}): Promise<LocalConsoleSite> {
  const bundling = bundleConsole();
  let handle: (request: IncomingMessage, response: ServerResponse) => Promise<void> = async (_request, response) =>
    send(response, 503, 'application/json', JSON.stringify({ message: 'Service Unavailable' }));
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      process.stderr.write(`console site: ${(error as Error).stack ?? String(error)}\n`);
      if (response.headersSent) return void response.destroy();
      send(response, 500, 'application/json', JSON.stringify({ message: 'Internal Server Error' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host, () => resolve()));
  const url = `http://${options.host}:${(server.address() as AddressInfo).port}`;

  const starting = startStandIn(
    { dataDir: options.dataDir, host: options.host, clientId: LOCAL_CLIENT_ID, consoleUrl: url },
    options.signal,
  );
  const ready = (async () => {
    const [bundle, standIn] = await Promise.all([bundling, starting]);
    const signIn: ConsoleSignIn = {
      issuer: standIn.issuer,
      clientId: LOCAL_CLIENT_ID,
      userPoolId: `${LOCAL_POOL_PREFIX}${consoleUsersPath(options.dataDir)}`,
      baseUrl: options.baseUrl,
    };
    const jwksUri = `${signIn.issuer}/jwks`;
    const verifier = JwtRsaVerifier.create({ issuer: signIn.issuer, audience: signIn.clientId, jwksUri });
    // aws-jwt-verify fetches JWKS over https only; the stand-in's is plain http on 127.0.0.1 and never rotates, so it is read once here.
    verifier.cacheJwks((await (await fetch(jwksUri, { signal: options.signal })).json()) as Parameters<typeof verifier.cacheJwks>[0]);
    options.signal?.throwIfAborted();
    return { bundle, standIn, signIn, verifier };
  })();
  let parts: Awaited<typeof ready>;
  try {
    parts = await ready;
  } catch (error) {
    // Stopped while starting (or failed): nothing of it outlives the promise.
    starting.then((started) => started.stop()).catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  }
  const { bundle, standIn, signIn, verifier } = parts;
  const page = consolePage({ 'console-authority': signIn.issuer, 'console-client-id': signIn.clientId });
  const headers = securityHeaders(signIn.issuer);
  options.register(signIn);

  handle = async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const method = request.method ?? 'GET';
    if (method === 'GET' && (path === '/' || path === '/index.html')) return send(response, 200, 'text/html; charset=utf-8', page, headers);
    if (method === 'GET' && path === '/assets/console.js') return send(response, 200, 'text/javascript; charset=utf-8', bundle.js, headers);
    if (method === 'GET' && path === '/assets/console.css') return send(response, 200, 'text/css; charset=utf-8', bundle.css, headers);
    const routeKey = `${method} ${path}`;
    // API Gateway's own answers: no route, no token, or a token the authorizer refuses.
    if (!ROUTES.has(routeKey)) return send(response, 404, 'application/json', JSON.stringify({ message: 'Not Found' }));
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const claims = token && (await verifier.verify(token).catch(() => undefined));
    if (!claims) return send(response, 401, 'application/json', JSON.stringify({ message: 'Unauthorized' }));
    const body = await bodyOf(request);
    if (body === undefined) return send(response, 413, 'application/json', JSON.stringify({ message: 'Request Entity Too Large' }));
    const result = normalizeResult(await options.invoke('console-api', apiEvent(request, routeKey, path, body, claims)));
    send(response, result.statusCode ?? 200, String(result.headers?.['content-type'] ?? 'application/json'), result.body ?? '', {
      ...headers,
      ...stringHeaders(result.headers),
    });
  };

  return {
    url,
    signIn,
    async close() {
      standIn.stop();
      // Cut the browsers' keep-alive connections now: after close() resolves would be too late, as it waits for them.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** The event API Gateway gives the function behind a JWT authorizer: the verified token's claims, as strings. */
function apiEvent(
  request: IncomingMessage,
  routeKey: string,
  path: string,
  body: string,
  claims: Readonly<Record<string, unknown>>,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  const now = new Date();
  const headers = Object.fromEntries(
    Object.entries(request.headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, [value].flat().join(',')]])),
  );
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers,
    body: body === '' ? undefined : body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local-console',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local-console',
      http: { method: request.method ?? 'GET', path, protocol: `HTTP/${request.httpVersion}`, sourceIp: '127.0.0.1', userAgent: '' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
      authorizer: {
        principalId: '',
        integrationLatency: 0,
        jwt: {
          claims: Object.fromEntries(
            Object.entries(claims).map(([name, value]) => [name, typeof value === 'string' ? value : String(value)]),
          ),
          scopes: null as unknown as string[],
        },
      },
    },
  };
}

/** The console distribution's headers (lib/constructs/console-site.ts), with the stand-in as the page's other origin. */
function securityHeaders(issuer: string): Record<string, string> {
  return {
    'cache-control': 'no-store',
    'content-security-policy':
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
      `connect-src 'self' ${issuer}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}

function send(response: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

const stringHeaders = (headers: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, String(value)]));

async function bodyOf(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The sign-in stand-in as a child process (local/sign-in-stand-in.ts says why), ready once it prints its issuer. */
async function startStandIn(settings: StandInSettings, signal?: AbortSignal): Promise<{ issuer: string; stop(): void }> {
  signal?.throwIfAborted();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'sign-in-stand-in.ts')], {
    env: { ...process.env, STAND_IN_SETTINGS: JSON.stringify(settings) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // oidc-provider warns that its store is in memory and that it prefers Node 22: both true and meant, so not passed on.
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
    if (!line.startsWith('oidc-provider WARNING')) process.stderr.write(`sign-in stand-in: ${line}\n`);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const issuer = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the sign-in stand-in exited (${code}) before it was ready`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { issuer: string }).issuer));
    // Not ready yet, so nothing of it to keep: killed outright, whatever it is stuck in.
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    issuer,
    stop: () => {
      child.stdin?.end();
      child.kill();
    },
  };
}
