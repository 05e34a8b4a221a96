import { clientAddress } from '../../../local/http-server';

describe('clientAddress (X-Forwarded-For with TRUST_PROXY=1)', () => {
  it('takes IPv4 and IPv6 literals as they are', () => {
    expect(clientAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddress('2001:db8::1')).toBe('2001:db8::1');
  });

  it('reduces a bracketed IPv6 or an IPv4 with a port to the address', () => {
    expect(clientAddress('[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(clientAddress('[2001:db8::1]')).toBe('2001:db8::1');
    expect(clientAddress('203.0.113.7:8080')).toBe('203.0.113.7');
  });

  it('ignores a value that is not an IP literal, so the socket address is used', () => {
    for (const entry of ['', 'unknown', 'example.com', 'example.com:80', '999.1.1.1', '[example.com]:443', '1.2.3.4:port']) {
      expect(clientAddress(entry)).toBeUndefined();
    }
  });
});
