import { clientAddress } from '../../../functions/domain/links/ip-block';

describe('clientAddress', () => {
  it('keys an IPv4 address on its /24', () => {
    expect(clientAddress('203.0.113.77')).toEqual({ ip: '203.0.113.77', block: '203.0.113.0/24' });
  });

  it('keys an IPv6 address on its /48 and writes it the RFC 5952 way', () => {
    expect(clientAddress('2001:0DB8:0001:0002:0000:0000:0000:0001')).toEqual({ ip: '2001:db8:1:2::1', block: '2001:db8:1::/48' });
    expect(clientAddress('2001:db8:abcd:ffff::9').block).toBe('2001:db8:abcd::/48');
    expect(clientAddress('2001:db8::1').block).toBe('2001:db8::/48');
    expect(clientAddress('::1')).toEqual({ ip: '::1', block: '::/48' });
  });

  it('gives every spelling of one IPv6 address the same key', () => {
    const spellings = ['2001:db8:0:0:1:0:0:1', '2001:DB8::1:0:0:1', '2001:0db8:0000:0000:0001:0000:0000:0001'];
    expect(new Set(spellings.map((s) => clientAddress(s).ip))).toEqual(new Set(['2001:db8::1:0:0:1']));
  });

  it('treats IPv4-mapped IPv6 as the IPv4 address, in dotted and hex notation', () => {
    expect(clientAddress('::ffff:198.51.100.7')).toEqual({ ip: '198.51.100.7', block: '198.51.100.0/24' });
    expect(clientAddress('::FFFF:c633:6407')).toEqual({ ip: '198.51.100.7', block: '198.51.100.0/24' });
  });

  it('makes something that is not an address its own block', () => {
    expect(clientAddress(' not-an-ip ')).toEqual({ ip: 'not-an-ip', block: 'not-an-ip' });
    expect(clientAddress('fe80::1%eth0').block).toBe('fe80::1%eth0');
  });
});
