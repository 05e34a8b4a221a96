import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { ADMIN_COMMANDS, runCommand, type Target, TargetError, UsageError } from '../admin/commands';
import { targetLookup } from '../admin/target';
import { errorAnswer } from '../functions/commands/errors';
import { commandLineWording } from '../functions/commands/flags';
import { POSTBACK_MACROS } from '../functions/domain/partner-postbacks/template';
import { bundleConsole, type ConsoleBundle } from './bundle';
import { appLinkView, tryFirstLaunch } from './deep-link-tools';
import { exportBucketOf, exportStatus } from './export-status';
import { consolePage } from './page';

/**
 * `npm run console [-- --stack NAME] [--port N]` (docs/console.md): the admin console on
 * 127.0.0.1. Its JSON API runs the admin CLI's own commands (admin/commands.ts) against the same
 * target the CLI would reach, so the console has no operation of its own. (One read-only view is
 * the console's: the Raw data page's last export per table, read from the export bucket by
 * console/export-status.ts.)
 *
 * Only this console's own page may drive it:
 * - the Host header must be 127.0.0.1:PORT or localhost:PORT, so a DNS-rebound name pointing at
 *   127.0.0.1 cannot reach it from another site's page;
 * - every API request is a POST with the run's random token in X-Console-Token (the page gets it
 *   from its own HTML, which no other origin can read), a JSON body, and, when the browser sends
 *   one, the console's own Origin; so another page can neither forge a request nor read an answer.
 */

export const TOKEN_HEADER = 'x-console-token';
const MAX_BODY_BYTES = 64 * 1024;

export interface ConsoleServer {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

export interface ConsoleOptions {
  /**
   * A look-up asked at every API request and never kept (the local runtime may have been restarted
   * on other ports, or stopped, since the last one: its TargetError is then the answer), or a
   * target that stays put.
   */
  readonly target: Target | (() => Promise<Target>);
  /** 0 picks a free port. */
  readonly port: number;
  readonly bundle?: ConsoleBundle;
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The flag at fault, passed on as the answer's `flag` so the page marks that field. */
    readonly flag?: string,
  ) {
    super(message);
  }
}

export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const bundle = options.bundle ?? (await bundleConsole());
  const token = randomBytes(32).toString('base64url');
  const { target: given } = options;
  const lookUp = typeof given === 'function' ? given : () => Promise.resolve(given);
  let port = options.port;
  const hosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const refusal = error instanceof HttpRefusal ? error : undefined;
      if (!refusal) process.stderr.write(`console: ${(error as Error).stack ?? String(error)}\n`);
      sendJson(response, refusal?.status ?? 500, {
        error: refusal?.message ?? 'internal error',
        ...(refusal?.flag === undefined ? {} : { flag: refusal.flag }),
      });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const host = request.headers.host ?? '';
    if (!hosts().has(host)) throw new HttpRefusal(421, `this console answers only to 127.0.0.1:${port} and localhost:${port}`);
    const path = new URL(request.url ?? '/', `http://${host}`).pathname;

    if (path.startsWith('/api/')) {
      checkApiRequest(request, host);
      const body = await readJson(request);
      sendJson(response, 200, await api(path, body));
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpRefusal(405, 'method not allowed');
    if (path === '/') return send(response, 200, 'text/html; charset=utf-8', page(token));
    if (path === '/assets/console.js') return send(response, 200, 'text/javascript; charset=utf-8', bundle.js);
    if (path === '/assets/console.css') return send(response, 200, 'text/css; charset=utf-8', bundle.css);
    throw new HttpRefusal(404, 'not found');
  }

  function checkApiRequest(request: IncomingMessage, host: string): void {
    if (request.method !== 'POST') throw new HttpRefusal(405, 'the console API takes POST only');
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) throw new HttpRefusal(403, 'cross-origin request refused');
    if (request.headers['sec-fetch-site'] !== undefined && request.headers['sec-fetch-site'] !== 'same-origin') {
      throw new HttpRefusal(403, 'cross-site request refused');
    }
    if (!sameToken(request.headers[TOKEN_HEADER], token)) throw new HttpRefusal(403, 'missing or wrong console token');
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? ''))
      throw new HttpRefusal(415, 'the console API takes application/json');
  }

  async function api(path: string, body: Record<string, unknown>): Promise<object> {
    const target = await lookUp().catch((error: unknown) => {
      throw asRefusal(error);
    });
    if (path === '/api/meta') {
      return {
        target: { base_url: target.baseUrl, stack: target.stack ?? null },
        commands: ADMIN_COMMANDS.map((command) => command.name),
        postback_macros: POSTBACK_MACROS,
      };
    }
    if (path === '/api/command') {
      const flags = body.flags ?? {};
      if (typeof body.command !== 'string' || typeof flags !== 'object' || flags === null || Array.isArray(flags)) {
        throw new HttpRefusal(400, 'expected {"command": "...", "flags": {...}}');
      }
      try {
        return await runCommand(body.command, flags as Record<string, unknown>, target);
      } catch (error) {
        // A runtime stopped while the command ran fails it with a socket error; say what happened instead.
        const gone = errorAnswer(error).expected
          ? undefined
          : await lookUp().then(
              () => undefined,
              (lookup: unknown) => lookup,
            );
        throw asRefusal(gone ?? error);
      }
    }
    if (path === '/api/export-status') {
      // The Raw data page's last export per table (console/export-status.ts): read from the export bucket.
      if (typeof body['app-key'] !== 'string') throw new HttpRefusal(400, 'expected {"app-key": "..."}');
      const appKey = body['app-key'];
      return await exportBucketOf(target)
        .then((bucket) => exportStatus(appKey, bucket))
        .catch((error: unknown) => {
          throw asRefusal(error);
        });
    }
    if (path === '/api/app-links') {
      // An app's link settings and its link domains' well-known files (console/deep-link-tools.ts).
      if (!isKeyText(body['app-key'])) throw new HttpRefusal(400, 'expected {"app-key": "..."}, a key of 1 to 256 characters', 'app-key');
      return await appLinkView(body['app-key']).catch((error: unknown) => {
        throw asRefusal(error);
      });
    }
    if (path === '/api/try-first-launch') {
      // A dry-run click on a link and the first-launch answer an app installed from it gets.
      if (!isKeyText(body['link-id']))
        throw new HttpRefusal(400, 'expected {"link-id": "...", "platform": "ios"|"android"}, a link id of 1 to 256 characters', 'link-id');
      if (body.platform !== 'ios' && body.platform !== 'android') throw new HttpRefusal(400, 'platform must be ios or android', 'platform');
      return await tryFirstLaunch(body['link-id'], body.platform).catch((error: unknown) => {
        throw asRefusal(error);
      });
    }
    throw new HttpRefusal(404, 'no such console API route');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new UsageError(`--port: 127.0.0.1:${options.port} is in use; pass --port N (0 for any free port)`)
          : error,
      ),
    );
    server.listen(options.port, '127.0.0.1', resolve);
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** An admin command's error as the CLI would print it, with the status that says whose fault it is (and the flag at fault). */
function asRefusal(error: unknown): HttpRefusal {
  const answer = errorAnswer(error);
  if (!answer.expected) process.stderr.write(`console: ${(error as Error).stack ?? String(error)}\n`);
  return new HttpRefusal(answer.status, answer.message, answer.flag);
}

/** An app key or link id as a look-up takes it: bounded, so an oversized one is refused here, not by the table. */
const isKeyText = (value: unknown): value is string => typeof value === 'string' && value.length >= 1 && value.length <= 256;

function sameToken(given: string | string[] | undefined, token: string): boolean {
  if (typeof given !== 'string') return false;
  const [a, b] = [Buffer.from(given), Buffer.from(token)];
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpRefusal(413, 'request body too large');
    chunks.push(chunk);
  }
  if (size === 0) return {};
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch {
    throw new HttpRefusal(400, 'the body is not a JSON object');
  }
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
    "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, body: object): void {
  if (response.headersSent) return void response.destroy();
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

const page = (token: string) => consolePage({ 'console-token': token });

async function main(): Promise<void> {
  const options = { stack: { type: 'string' }, port: { type: 'string', default: process.env.CONSOLE_PORT ?? '4000' } } as const;
  const { values } = (() => {
    try {
      return parseArgs({ args: process.argv.slice(2), strict: true, options });
    } catch (error) {
      throw new UsageError(commandLineWording(error, options));
    }
  })();
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a port number from 0 to 65535 (0 picks a free one), not ${values.port}`);
  const lookup = targetLookup(values.stack);
  // The first look-up is made now, so a console started without its target says so at once.
  const target = await lookup();
  const console_ = await startConsole({ target: lookup, port });
  const where = target.stack ? `stack ${target.stack} (${target.baseUrl})` : `the local runtime at ${target.baseUrl}`;
  process.stdout.write(`Admin console for ${where}:\n\n  ${console_.url}\n\nCtrl-C stops it.\n`);
  const stop = () => void console_.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    const expected = error instanceof UsageError || error instanceof TargetError;
    // The error last, below the usage, where the eye lands.
    const usage = error instanceof UsageError ? 'usage: npm run console [-- --stack NAME] [--port N]\n\n' : '';
    process.stderr.write(`${usage}error: ${expected ? (error as Error).message : (error as Error).stack}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  });
}
