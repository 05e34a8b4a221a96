import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { stripPort, viewerOf } from '../../../functions/shared/viewer';

const event = (headers: Record<string, string>, sourceIp = '130.176.0.1') =>
  ({ headers, requestContext: { http: { sourceIp } } }) as unknown as APIGatewayProxyEventV2;

describe('the viewer of a request', () => {
  const secret = 's3cret';
  const edge = { 'x-origin-verify': secret };

  it('believes CloudFront viewer headers when the origin secret matches', () => {
    const viewer = viewerOf(
      event({ ...edge, 'cloudfront-viewer-address': '198.51.100.10:46532', 'cloudfront-viewer-country': 'de', 'cloudfront-viewer-asn': '3320' }),
      secret,
    );
    expect(viewer).toEqual({ ip: '198.51.100.10', country: 'DE', asn: 3320 });
  });

  it('ignores forged viewer headers on a request that did not come through CloudFront', () => {
    const forged = { 'cloudfront-viewer-address': '1.2.3.4:1', 'cloudfront-viewer-country': 'US', 'x-forwarded-for': '5.6.7.8' };
    expect(viewerOf(event(forged, '203.0.113.9'), secret)).toEqual({ ip: '203.0.113.9' });
    expect(viewerOf(event({ ...forged, 'x-origin-verify': 'wrong' }, '203.0.113.9'), secret)).toEqual({ ip: '203.0.113.9' });
    expect(viewerOf(event({ ...forged, 'x-origin-verify': '' }, '203.0.113.9'), '')).toEqual({ ip: '203.0.113.9' });
  });

  it('reads IPv6 viewer addresses with their port and folds IPv4-mapped addresses to IPv4', () => {
    expect(viewerOf(event({ ...edge, 'cloudfront-viewer-address': '2001:DB8::8:46532' }), secret).ip).toBe('2001:db8::8');
    expect(viewerOf(event({ ...edge, 'cloudfront-viewer-address': '[::ffff:192.0.2.7]:443' }), secret).ip).toBe('192.0.2.7');
    expect(stripPort('192.0.2.1')).toBe('192.0.2.1');
  });
});
