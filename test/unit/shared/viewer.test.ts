import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { markFromEdge, stripPort, viewerOf } from '../../../functions/shared/viewer';

const event = (headers: Record<string, string>, sourceIp = '130.176.0.1') =>
  ({ headers, requestContext: { http: { sourceIp } } }) as unknown as APIGatewayProxyEventV2;

describe('the viewer of a request', () => {
  it('believes CloudFront viewer headers on a request the origin check found the secret on', () => {
    const request = event({
      'cloudfront-viewer-address': '198.51.100.10:46532',
      'cloudfront-viewer-country': 'de',
      'cloudfront-viewer-asn': '3320',
    });
    expect(viewerOf(request)).toEqual({ ip: '130.176.0.1' });
    markFromEdge(request);
    expect(viewerOf(request)).toEqual({ ip: '198.51.100.10', country: 'DE', asn: 3320 });
  });

  it('ignores forged viewer headers on a request that did not come through CloudFront', () => {
    const forged = { 'cloudfront-viewer-address': '1.2.3.4:1', 'cloudfront-viewer-country': 'US', 'x-forwarded-for': '5.6.7.8' };
    expect(viewerOf(event(forged, '203.0.113.9'))).toEqual({ ip: '203.0.113.9' });
    // A header named like the origin secret proves nothing by itself: only the origin check marks a request.
    expect(viewerOf(event({ ...forged, 'x-origin-verify': 'anything' }, '203.0.113.9'))).toEqual({ ip: '203.0.113.9' });
    expect(viewerOf(event(forged, '203.0.113.9'), false)).toEqual({ ip: '203.0.113.9' });
  });

  it('reads IPv6 viewer addresses with their port and folds IPv4-mapped addresses to IPv4', () => {
    expect(viewerOf(event({ 'cloudfront-viewer-address': '2001:DB8::8:46532' }), true).ip).toBe('2001:db8::8');
    expect(viewerOf(event({ 'cloudfront-viewer-address': '[::ffff:192.0.2.7]:443' }), true).ip).toBe('192.0.2.7');
    expect(stripPort('192.0.2.1')).toBe('192.0.2.1');
  });
});
