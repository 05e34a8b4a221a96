import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { buildEvent, matchRoute, routesFromManifest } from '../../../local/api-gateway';

const routes = routesFromManifest();
const request = (method: string, url: string, headers: Record<string, string> = {}) =>
  Object.assign(Readable.from([]), { method, url, headers, httpVersion: '1.1' }) as unknown as IncomingMessage;

describe('local API Gateway routing', () => {
  it('routes each manifest route to its function', () => {
    expect(matchRoute(routes, 'GET', '/health')?.route.functionName).toBe('health');
    expect(matchRoute(routes, 'POST', '/event')?.route.functionName).toBe('ingest');
    expect(matchRoute(routes, 'GET', '/l/abc123')).toMatchObject({
      route: { functionName: 'link-redirect' },
      pathParameters: { link_id: 'abc123' },
    });
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
    expect(matchRoute(routes, 'GET', '/l/a%20b')?.pathParameters).toEqual({ link_id: 'a b' });
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
