import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { type FunctionSpec, functions, functionUrlPathPattern, originVerifyHeader } from '../lib/manifest';

/**
 * What API Gateway (HTTP API, payload format 2.0) does between the client and the function:
 * pick the route, and build the event exactly as AWS does, including base64 bodies.
 */
interface Route {
  routeKey: string;
  method: string;
  segments: string[];
  greedy: boolean;
  functionName: string;
  /**
   * A `functionUrl` function's route: CloudFront's path pattern's prefix ("/l/" of "/l/*"). Such
   * a route is CloudFront's behavior, not API Gateway's: every path under it goes to the function
   * (GET and HEAD; CloudFront refuses other methods itself), whose event is the function URL's.
   */
  urlPrefix?: string;
}

export interface RouteMatch {
  route: Route;
  pathParameters?: Record<string, string>;
}

export function routesFromManifest(): Route[] {
  const routes: Route[] = [];
  for (const [functionName, spec] of Object.entries(functions) as [string, FunctionSpec][]) {
    for (const routeKey of spec.routes ?? []) {
      if (spec.functionUrl) {
        const urlPrefix = functionUrlPathPattern(routeKey).slice(0, -1);
        routes.push({ routeKey, method: 'GET', segments: [], greedy: false, functionName, urlPrefix });
        continue;
      }
      if (routeKey === '$default') {
        routes.push({ routeKey, method: 'ANY', segments: [], greedy: true, functionName });
        continue;
      }
      const [method, path, ...rest] = routeKey.split(' ');
      if (!method || path === undefined || rest.length > 0)
        throw new Error(`${functionName}: route key '${routeKey}' is not 'METHOD /path'`);
      const segments = path.split('/').filter(Boolean);
      routes.push({ routeKey, method, segments, greedy: segments.at(-1)?.endsWith('+}') ?? false, functionName });
    }
  }
  return routes;
}

/** API Gateway prefers literal paths over parameters over greedy paths, and a method over ANY. */
export function matchRoute(routes: Route[], method: string, path: string): RouteMatch | undefined {
  // CloudFront's behaviors come before the API's routes: a function URL's path is never the API's.
  const fromUrl = functionUrlRouteOf(routes, path);
  if (fromUrl) return { route: fromUrl };
  const parts = path.split('/').filter(Boolean);
  let best: { match: RouteMatch; score: number } | undefined;
  for (const route of routes) {
    if (route.urlPrefix !== undefined) continue;
    if (route.method !== 'ANY' && route.method !== method) continue;
    const params = route.routeKey === '$default' ? {} : matchSegments(route, parts);
    if (!params) continue;
    const literals = route.segments.filter((s) => !s.startsWith('{')).length;
    const score =
      (route.routeKey === '$default' ? 0 : 1_000_000) + (route.greedy ? 0 : 100_000) + literals * 10 + (route.method === 'ANY' ? 0 : 1);
    if (!best || score > best.score) {
      best = { match: { route, pathParameters: Object.keys(params).length ? params : undefined }, score };
    }
  }
  return best?.match;
}

/** The function URL route whose CloudFront path pattern takes `path`, whatever the method. */
export function functionUrlRouteOf(routes: Route[], path: string): Route | undefined {
  return routes.find((route) => route.urlPrefix !== undefined && path.startsWith(route.urlPrefix));
}

/** The methods CloudFront passes on a function URL's behavior (ALLOW_GET_HEAD, lib/constructs/edge.ts). */
export const FUNCTION_URL_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** The local stand-in for a function URL's id (its host's first label in AWS: 32 characters). */
const LOCAL_URL_ID = 'local0function0url00000000000000';

function matchSegments(route: Route, parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  const { segments } = route;
  if (route.greedy ? parts.length < segments.length : parts.length !== segments.length) return undefined;
  for (const [i, segment] of segments.entries()) {
    if (segment.endsWith('+}')) {
      params[segment.slice(1, -2)] = parts.slice(i).map(decodeSegment).join('/');
      return params;
    }
    const part = parts[i];
    if (part === undefined) return undefined;
    if (segment.startsWith('{')) params[segment.slice(1, -1)] = decodeSegment(part);
    else if (segment !== part) return undefined;
  }
  return params;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Bodies API Gateway passes as text; everything else (and anything compressed) is base64. */
function isTextual(contentType: string | undefined, contentEncoding: string | undefined): boolean {
  if (contentEncoding && contentEncoding !== 'identity') return false;
  if (!contentType) return true;
  const [mediaType = ''] = contentType.split(';');
  const type = mediaType.trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/xml' ||
    type === 'application/x-www-form-urlencoded' ||
    type === 'application/javascript'
  );
}

export function buildEvent(
  request: IncomingMessage,
  body: Buffer,
  match: RouteMatch,
  sourceIp: string,
  extraHeaders: Record<string, string>,
): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  Object.assign(headers, extraHeaders);
  const cookies = headers.cookie
    ?.split(';')
    .map((c) => c.trim())
    .filter(Boolean);
  delete headers.cookie;

  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;

  // The function URL's event (payload 2.0 too): route key $default, no path parameters, the URL's
  // own host (CloudFront forwards every viewer header but Host, ALL_VIEWER_EXCEPT_HOST_HEADER).
  const fromUrl = match.route.urlPrefix !== undefined;
  const routeKey = fromUrl ? '$default' : match.route.routeKey;
  const domainName = fromUrl ? `${LOCAL_URL_ID}.lambda-url.us-east-1.on.aws` : (headers.host ?? 'localhost');
  if (fromUrl) headers.host = domainName;
  const now = new Date();
  // A text type's body that is not UTF-8 goes as base64, so the handler judges the bytes as sent
  // (they fail its strict decode) instead of a string with U+FFFD where they were.
  const textual = isTextual(headers['content-type'], headers['content-encoding']) && isUtf8(body);
  const method = (request.method ?? 'GET').toUpperCase();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: cookies?.length ? cookies : undefined,
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: match.pathParameters,
    requestContext: {
      accountId: '000000000000',
      apiId: fromUrl ? LOCAL_URL_ID : 'local',
      domainName,
      domainPrefix: fromUrl ? LOCAL_URL_ID : 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : textual ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

/** A handler may return a structured result or, as API Gateway allows, any JSON value. */
export function normalizeResult(result: unknown): APIGatewayProxyStructuredResultV2 {
  if (result && typeof result === 'object' && 'statusCode' in result) return result as APIGatewayProxyStructuredResultV2;
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: typeof result === 'string' ? result : JSON.stringify(result ?? null),
  };
}

/** An answer API Gateway gives by itself, with its own body. */
export interface GatewayAnswer {
  readonly statusCode: number;
  readonly body: { readonly message: string };
}

/** The most answers the local authorizer cache keeps; API Gateway's is bounded too. */
const AUTHORIZER_CACHE_ENTRIES = 10_000;

/**
 * The HTTP API's Lambda authorizer as API Gateway runs it (lib/constructs/edge.ts, authorizeWith):
 * identity source the origin header, simple responses, answers cached per header value for the
 * manifest's `cacheSeconds`. No header (or an empty one): 401 {"message":"Unauthorized"} without
 * invoking anything. A value the authorizer refuses: 403 {"message":"Forbidden"}. A failing
 * authorizer throws, which the edge answers 500 as API Gateway does. Undefined means the route's
 * function runs. Without an authorizer in the manifest every request goes through.
 */
export function authorizerFromManifest(
  invoke: (name: string, event: unknown) => Promise<unknown>,
  now: () => number = Date.now,
): (event: APIGatewayProxyEventV2) => Promise<GatewayAnswer | undefined> {
  const entry = (Object.entries(functions) as [string, FunctionSpec][]).find(([, spec]) => spec.authorizer);
  if (!entry) return async () => undefined;
  const [name, spec] = entry;
  const ttlMs = (spec.authorizer?.cacheSeconds ?? 0) * 1000;
  const answers = new Map<string, { authorized: boolean; expiresAt: number }>();
  return async (event) => {
    const value = event.headers[originVerifyHeader];
    if (!value) return { statusCode: 401, body: { message: 'Unauthorized' } };
    let answer = answers.get(value);
    if (!answer || answer.expiresAt <= now()) {
      const result = await invoke(name, authorizerEvent(event, value));
      const authorized = typeof result === 'object' && result !== null && 'isAuthorized' in result && result.isAuthorized === true;
      answer = { authorized, expiresAt: now() + ttlMs };
      answers.delete(value);
      answers.set(value, answer);
      // Oldest first: Map keeps insertion order.
      for (const oldest of answers.keys()) {
        if (answers.size <= AUTHORIZER_CACHE_ENTRIES) break;
        answers.delete(oldest);
      }
    }
    return answer.authorized ? undefined : { statusCode: 403, body: { message: 'Forbidden' } };
  };
}

/** The REQUEST authorizer event (payload 2.0) API Gateway sends for a route's event. */
function authorizerEvent(event: APIGatewayProxyEventV2, identity: string): APIGatewayRequestAuthorizerEventV2 {
  const { body: _body, isBase64Encoded: _encoded, ...request } = event;
  const { method, path } = event.requestContext.http;
  return {
    ...request,
    cookies: event.cookies ?? [],
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:us-east-1:000000000000:${event.requestContext.apiId}/${event.requestContext.stage}/${method}${path}`,
    identitySource: [identity],
  };
}
