import fc from 'fast-check';
import {
  answerHeaders,
  CORS_REQUEST_HEADERS,
  isCorsPath,
  listsOrigin,
  preflightHeaders,
  WEB_ORIGIN_LIMITS,
  webOriginOf,
} from '../../../functions/domain/tenants/web-origins';

describe('web origins an app lists', () => {
  it.each([
    ['https://shop.example.com', 'https://shop.example.com'],
    ['HTTPS://Shop.Example.COM/', 'https://shop.example.com'],
    ['https://shop.example.com:443', 'https://shop.example.com'],
    ['https://shop.example.com:8443', 'https://shop.example.com:8443'],
    ['http://localhost:5173', 'http://localhost:5173'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
    ['http://localhost:80', 'http://localhost'],
    ['https://10.0.0.1:8443', 'https://10.0.0.1:8443'],
  ])('takes %s as %s', (text, origin) => {
    expect(webOriginOf(text)).toBe(origin);
  });

  it.each([
    ['plain http on a public host', 'http://shop.example.com'],
    ['a path', 'https://shop.example.com/app'],
    ['a query', 'https://shop.example.com?x=1'],
    ['a fragment', 'https://shop.example.com#top'],
    ['credentials', 'https://user:pw@shop.example.com'],
    ['another scheme', 'ftp://shop.example.com'],
    ['no scheme', 'shop.example.com'],
    ['a port out of range', 'https://shop.example.com:70000'],
    ['port zero', 'https://shop.example.com:0'],
    ['a wildcard', 'https://*.example.com'],
    ['the null origin of a sandboxed page or a file', 'null'],
    ['a label starting with a hyphen', 'https://-shop.example.com'],
    ['an empty string', ''],
    ['a number browsers write as an IPv4 address', 'https://0'],
    ['an IPv4 address in hex', 'https://a.0x1'],
    ['an IPv6 address but the loopback', 'https://[2001:db8::1]'],
    ['text past the length limit', `https://${'a'.repeat(WEB_ORIGIN_LIMITS.length)}.com`],
  ])('refuses %s', (_, text) => {
    expect(webOriginOf(text)).toBeUndefined();
  });

  it('reads an https origin as the URL standard serializes it (the Origin header browsers send)', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
    const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));
    const ipv4 = fc.ipV4();
    const host = fc.oneof(name, ipv4);
    const port = fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined });
    fc.assert(
      fc.property(host, port, fc.boolean(), (hostName, portNumber, upper) => {
        const text = `https://${upper ? hostName.toUpperCase() : hostName}${portNumber === undefined ? '' : `:${portNumber}`}`;
        // Refused or equal to the URL standard's serialization: never a listed origin no browser sends.
        const origin = webOriginOf(text);
        if (origin !== undefined) expect(origin).toBe(new URL(text).origin);
        else expect(URL.parse(text)?.origin).not.toBe(text.toLowerCase());
        expect(webOriginOf(webOriginOf(text) ?? '')).toBe(webOriginOf(text));
      }),
    );
  });

  it("allows an answer only to an origin the app lists, compared as the browser's header normalizes", () => {
    const app = { web_origins: ['https://shop.example.com', 'http://localhost:5173'] };
    expect(listsOrigin(app, 'https://shop.example.com')).toBe('https://shop.example.com');
    expect(listsOrigin(app, 'https://shop.example.com:443')).toBe('https://shop.example.com');
    expect(listsOrigin(app, 'https://evil.example.com')).toBeUndefined();
    expect(listsOrigin(app, 'http://shop.example.com')).toBeUndefined();
    expect(listsOrigin(app, undefined)).toBeUndefined();
    expect(listsOrigin({}, 'https://shop.example.com')).toBeUndefined();
  });

  it('lets a preflight send the signing headers, the SDK version, Content-Type and Content-Encoding, never with credentials', () => {
    const headers = preflightHeaders('https://shop.example.com');
    expect(headers['access-control-allow-origin']).toBe('https://shop.example.com');
    expect(headers['access-control-allow-headers']?.split(', ')).toEqual([...CORS_REQUEST_HEADERS]);
    expect(CORS_REQUEST_HEADERS).toEqual(
      expect.arrayContaining(['content-type', 'content-encoding', 'x-service-company-key', 'x-service-app-key', 'x-service-signature']),
    );
    expect(headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
    expect(Number(headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(headers).not.toHaveProperty('access-control-allow-credentials');
    expect(headers.vary).toBe('Origin');
    expect(answerHeaders('https://shop.example.com')).not.toHaveProperty('access-control-allow-credentials');
    expect(answerHeaders('https://shop.example.com')['access-control-expose-headers']).toContain('retry-after');
  });

  it.each([
    ['/event', true],
    ['/privacy/delete', true],
    ['/sdk/v1/attribution', true],
    ['/sdk/v1/skan-schema', true],
    ['/api/v1/reports/events', false],
    ['/api/v1/cost', false],
    ['/l/abc', false],
    ['/health', false],
    ['/event/x', false],
  ])('treats %s as a CORS path: %s', (path, cors) => {
    expect(isCorsPath(path)).toBe(cors);
  });
});
