import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { functionUrlPathPattern } from '../../../lib/manifest';
import { buildEvent, functionUrlRouteOf, matchRoute, routesFromManifest } from '../../../local/api-gateway';

const routes = routesFromManifest();
const request = (method: string, url: string, headers: Record<string, string> = {}) =>
  Object.assign(Readable.from([]), { method, url, headers, httpVersion: '1.1' }) as unknown as IncomingMessage;

describe('local API Gateway routing', () => {
  it('routes each manifest route to its function', () => {
    expect(matchRoute(routes, 'GET', '/health')?.route.functionName).toBe('health');
    expect(matchRoute(routes, 'POST', '/event')?.route.functionName).toBe('ingest');
    expect(matchRoute(routes, 'GET', '/l/abc123')?.route.functionName).toBe('link-redirect');
  });

  it('prefers a literal route over the greedy reports fallback and the fallback over $default', () => {
    expect(matchRoute(routes, 'GET', '/api/v1/reports/nope')).toMatchObject({
      route: { routeKey: 'ANY /api/v1/reports/{proxy+}' },
      pathParameters: { proxy: 'nope' },
    });
    expect(matchRoute(routes, 'GET', '/somewhere/else')?.route.routeKey).toBe('$default');
  });

  it('sends a method the route does not take to $default, as API Gateway does', () => {
    expect(matchRoute(routes, 'DELETE', '/health')?.route.routeKey).toBe('$default');
  });

  it('decodes path parameters', () => {
    expect(matchRoute(routes, 'GET', '/api/v1/reports/a%20b')?.pathParameters).toEqual({ proxy: 'a b' });
  });
});

describe("local CloudFront's function URL behavior (GET /l/{link_id}, issue 41)", () => {
  it('sends every path under /l/ to the redirect, whatever its segments, before any API route', () => {
    for (const path of ['/l/abc', '/l/', '/l/a/b', '/l/a%2Fb'])
      expect([path, matchRoute(routes, 'GET', path)]).toEqual([
        path,
        { route: expect.objectContaining({ functionName: 'link-redirect' }) },
      ]);
    expect(functionUrlRouteOf(routes, '/l/a/b')?.functionName).toBe('link-redirect');
    expect(functionUrlRouteOf(routes, '/link/abc')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/l')?.route.routeKey).toBe('$default');
  });

  it('takes only GET routes whose one parameter ends the path, as a CloudFront path pattern can say', () => {
    expect(functionUrlPathPattern('GET /l/{link_id}')).toBe('/l/*');
    expect(functionUrlPathPattern('GET /a/b/{id}')).toBe('/a/b/*');
    for (const route of ['POST /l/{link_id}', 'GET /l/{link_id}/x', 'GET /{id}', 'GET /l/{proxy+}', 'GET /l/x', '$default'])
      expect(() => functionUrlPathPattern(route)).toThrow(/cannot be served from a function URL/);
  });

  it("builds the function URL's event: route key $default, no path parameters, the URL's own host", () => {
    const match = matchRoute(routes, 'GET', '/l/AbC123xYz0')!;
    const event = buildEvent(
      request('GET', '/l/AbC123xYz0?click_id=c1', { host: 'go.example.com', 'user-agent': 'UA' }),
      Buffer.alloc(0),
      match,
      '10.0.0.1',
      {},
    );
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/l/AbC123xYz0',
      queryStringParameters: { click_id: 'c1' },
    });
    expect(event.pathParameters).toBeUndefined();
    expect(event.headers.host).toMatch(/^[a-z0-9]{32}\.lambda-url\.us-east-1\.on\.aws$/);
    expect(event.requestContext).toMatchObject({ routeKey: '$default', stage: '$default', domainName: event.headers.host });
    expect(event.requestContext.http).toMatchObject({ method: 'GET', path: '/l/AbC123xYz0', sourceIp: '10.0.0.1', userAgent: 'UA' });
  });
});

describe('local API Gateway events', () => {
  const match = matchRoute(routes, 'POST', '/event')!;

  it('passes a JSON body as text', () => {
    const event = buildEvent(
      request('POST', '/event', { 'content-type': 'application/json' }),
      Buffer.from('{"a":1}'),
      match,
      '10.0.0.1',
      {},
    );
    expect(event).toMatchObject({ version: '2.0', routeKey: 'POST /event', body: '{"a":1}', isBase64Encoded: false });
    expect(event.requestContext.http).toMatchObject({ method: 'POST', path: '/event', sourceIp: '10.0.0.1' });
  });

  it('base64-encodes a JSON body that is not UTF-8, so the handler judges the bytes as sent', () => {
    const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const event = buildEvent(request('POST', '/event', { 'content-type': 'application/json' }), body, match, '10.0.0.1', {});
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body as string, 'base64')).toEqual(body);
  });

  it('base64-encodes a gzip body, as API Gateway does for binary content', () => {
    const body = Buffer.from([0x1f, 0x8b, 0x08, 0x00]);
    const event = buildEvent(
      request('POST', '/event', { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
      body,
      match,
      '10.0.0.1',
      {},
    );
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body as string, 'base64')).toEqual(body);
  });

  it('joins repeated query parameters with commas and splits cookies out of the headers', () => {
    const event = buildEvent(request('GET', '/l/x?a=1&a=2&b=%20c', { cookie: 'k=v; z=y' }), Buffer.alloc(0), match, '10.0.0.1', {});
    expect(event.queryStringParameters).toEqual({ a: '1,2', b: ' c' });
    expect(event.rawQueryString).toBe('a=1&a=2&b=%20c');
    expect(event.cookies).toEqual(['k=v', 'z=y']);
    expect(event.headers.cookie).toBeUndefined();
    expect(event.body).toBeUndefined();
  });
});
