import { Agent, request } from 'node:http';
import { type OpenApi, type Operation, pointerOf } from './openapi';

/**
 * Real HTTP answers held against docs/openapi.yaml: the oracle of the reliability suite. An
 * answer is documented when its status is listed for the operation the request reaches, its
 * JSON body (error code included) validates against that response's schema, and its documented
 * headers do. test/integration/openapi.test.ts holds its answers to the same rule; this module
 * also resolves the paths that test never sends (several segments under the reports prefix, a
 * trailing slash) the way the edge routes them.
 */
export interface HttpAnswer {
  method: string;
  /** The path as sent, query excluded. */
  path: string;
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface HttpCall {
  method: string;
  /** Path and query, as sent on the request line. */
  target: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One request with exactly these headers and bytes (fetch refuses a body on GET and rewrites
 * some headers; a fuzzer needs neither). Redirects are not followed.
 *
 * A kept-alive connection the server closes as the request goes out on it is reset before any
 * answer, and the request reached no handler: as Node's documentation advises
 * (`request.reusedSocket`), it is sent once more on a new connection. A reset on a new
 * connection is the server's doing and is thrown.
 */
export async function httpCall(baseUrl: string, call: HttpCall): Promise<HttpAnswer> {
  try {
    return await attempt(baseUrl, call);
  } catch (error) {
    if (!(error instanceof StaleConnection)) throw error;
    return attempt(baseUrl, call);
  }
}

class StaleConnection extends Error {}

function attempt(baseUrl: string, call: HttpCall): Promise<HttpAnswer> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { ...call.headers };
  if (call.body !== undefined) headers['content-length'] = String(call.body.length);
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request({ host: url.hostname, port: url.port, method: call.method, path: call.target, headers, agent }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({
          method: call.method,
          path: call.target.split('?')[0],
          status: response.statusCode ?? 0,
          headers: flat,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const stale = !answered && outgoing.reusedSocket && error.code === 'ECONNRESET';
      reject(stale ? new StaleConnection(error.message) : error);
    });
    outgoing.end(call.body);
  });
}

/** The `error` of a JSON body, if any. */
export function errorOf(answer: Pick<HttpAnswer, 'text'>): string | undefined {
  try {
    const error = (JSON.parse(answer.text) as { error?: unknown })?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

const REPORTS_PREFIX = '/api/v1/reports';
const LINK_PREFIX = '/l/';

/**
 * CloudFront's own answer to a method the /l/* behavior does not take (it takes GET and HEAD):
 * 403 with the edge's body, which docs/openapi.yaml ("The edge") does not list per operation.
 */
function edgeRefusal(answer: HttpAnswer): boolean {
  const resolved = new URL(answer.path, 'http://localhost').pathname;
  return resolved.startsWith(LINK_PREFIX) && answer.method !== 'GET' && answer.method !== 'HEAD' && answer.status === 403;
}

/**
 * The operation a request reaches. The path is read as a URL parser reads it (dot segments
 * resolved, as every HTTP client and the edge do), the edge matches on its non-empty segments (so
 * a trailing or doubled slash changes nothing), and the document's `/api/v1/reports/{name}` stands
 * for any path under the prefix, several segments included, as its description says.
 */
export function operationOf(api: OpenApi, method: string, rawPath: string): Operation | undefined {
  const resolved = new URL(rawPath, 'http://localhost').pathname;
  const path = `/${resolved.split('/').filter(Boolean).join('/')}`;
  const direct = api.operationFor(method, path);
  // CloudFront's /l/* behavior: every path under /l/ reaches the redirect's function URL (issue 41).
  if (resolved.startsWith(LINK_PREFIX)) return api.operationFor(method, `${LINK_PREFIX}x`) ?? direct;
  if (path.startsWith(`${REPORTS_PREFIX}/`) && direct?.key === '$default') return api.operationFor(method, `${REPORTS_PREFIX}/x`) ?? direct;
  return direct;
}

/** What an answer breaks of the document; [] when it is documented, body and headers included. */
export function problemsOf(api: OpenApi, answer: HttpAnswer): string[] {
  if (edgeRefusal(answer)) return [];
  const op = operationOf(api, answer.method, answer.path);
  const status = String(answer.status);
  const raw = op?.spec.responses?.[status];
  if (!op || !raw)
    return [`${status} ${errorOf(answer) ?? ''} is not documented for ${op?.key ?? `${answer.method} ${answer.path}`}`.trim()];
  const response = api.response(raw, `${op.pointer}${pointerOf('responses', status)}`, status);
  const problems = response.implemented ? [] : [`${op.key} ${status} is marked x-implemented: false`];
  // A HEAD answer carries the headers of its body but never the body.
  if (answer.method === 'HEAD') return problems;
  if (response.spec.content?.['application/json']) {
    if (!answer.headers['content-type']?.startsWith('application/json')) problems.push(`content-type ${answer.headers['content-type']}`);
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...problems, `body is not JSON: ${answer.text.slice(0, 80)}`];
    }
    problems.push(
      ...api.validate(`${response.pointer}${pointerOf('content', 'application/json', 'schema')}`, body).map((p) => `body ${p}`),
    );
  } else if (answer.text !== '') {
    problems.push(`a body where none is documented: ${answer.text.slice(0, 80)}`);
  }
  for (const [name, rawHeader] of Object.entries((response.spec.headers ?? {}) as Record<string, Record<string, unknown>>)) {
    const { node: header, pointer } = api.resolve(rawHeader, `${response.pointer}${pointerOf('headers', name)}`);
    const value = answer.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) problems.push(`header ${name} is missing`);
      continue;
    }
    const typed = header.schema?.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    problems.push(...api.validate(`${pointer}/schema`, typed).map((p) => `header ${name} ${p}`));
  }
  return problems;
}

/**
 * The reliability suite's rule for every answer: documented as above, and never a 500 (which
 * the document lists only as what "anything unexpected" becomes). Returns the answer's summary
 * and its problems, so a failing expectation shows the request that broke it.
 */
export function verdictOf(api: OpenApi, answer: HttpAnswer): { answer: string; problems: string[] } {
  const problems = problemsOf(api, answer);
  if (answer.status >= 500 && answer.status !== 503) problems.unshift(`a ${answer.status}: ${answer.text.slice(0, 120)}`);
  return { answer: `${answer.method} ${answer.path} -> ${answer.status} ${errorOf(answer) ?? ''}`.trim(), problems };
}
