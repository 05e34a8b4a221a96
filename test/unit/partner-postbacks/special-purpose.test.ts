import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { checkDestination, DestinationRefused, refusedAddress } from '../../../functions/domain/partner-postbacks/destination';

/**
 * The oracle: every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries as IANA
 * lists them (https://www.iana.org/assignments/iana-ipv4-special-registry and
 * iana-ipv6-special-registry, 2025), sub-blocks included, with the two multicast spaces and the
 * IPv6 space outside global unicast. No address of any of them may be a postback's destination.
 */
const IANA_IPV4 = [
  '0.0.0.0/8',
  '0.0.0.0/32',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.0.0/29',
  '192.0.0.8/32',
  '192.0.0.9/32',
  '192.0.0.10/32',
  '192.0.0.170/32',
  '192.0.0.171/32',
  '192.0.2.0/24',
  '192.31.196.0/24',
  '192.52.193.0/24',
  '192.88.99.0/24',
  '192.88.99.2/32',
  '192.168.0.0/16',
  '192.175.48.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '240.0.0.0/4',
  '255.255.255.255/32',
  // The IPv4 multicast address space registry.
  '224.0.0.0/4',
];
const IANA_IPV6 = [
  '::1/128',
  '::/128',
  '::ffff:0:0/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '100:0:0:1::/64',
  '2001::/23',
  '2001::/32',
  '2001:1::1/128',
  '2001:1::2/128',
  '2001:1::3/128',
  '2001:2::/48',
  '2001:3::/32',
  '2001:4:112::/48',
  '2001:10::/28',
  '2001:20::/28',
  '2001:30::/28',
  '2001:db8::/32',
  '2002::/16',
  '2620:4f:8000::/48',
  '3fff::/20',
  '5f00::/16',
  'fc00::/7',
  'fe80::/10',
  // The IPv6 address space registry: multicast, and the reserved space around global unicast
  // (the deprecated IPv4-compatible ::/96 and site-local fec0::/10 among it).
  'ff00::/8',
  '::/8',
  '4000::/3',
  'e000::/4',
  'fec0::/10',
];

const strict = { allowLoopback: false };

/** The first, last and middle addresses of a block, as strings. */
function samples(cidr: string): string[] {
  const [base, bits] = ipaddr.parseCIDR(cidr);
  const bytes = base.toByteArray();
  const total = bytes.length * 8;
  const at = (fill: 'first' | 'middle' | 'last') => {
    const out = [...bytes];
    for (let bit = bits; bit < total; bit++) {
      const set = fill === 'last' || (fill === 'middle' && bit === bits) || (fill === 'middle' && bit === total - 1);
      const mask = 0x80 >> (bit % 8);
      out[bit >> 3] = set ? out[bit >> 3] | mask : out[bit >> 3] & ~mask;
    }
    return ipaddr.fromByteArray(out).toString();
  };
  return [...new Set([at('first'), at('middle'), at('last')])];
}

/** A random address inside a block. */
const inside = (cidr: string) => {
  const [base, bits] = ipaddr.parseCIDR(cidr);
  const length = base.toByteArray().length;
  return fc.uint8Array({ minLength: length, maxLength: length }).map((random) => {
    const bytes = base.toByteArray();
    for (let bit = bits; bit < length * 8; bit++) {
      const mask = 0x80 >> (bit % 8);
      bytes[bit >> 3] = random[bit >> 3] & mask ? bytes[bit >> 3] | mask : bytes[bit >> 3] & ~mask;
    }
    return ipaddr.fromByteArray(bytes).toString();
  });
};

const inAny = (address: string, blocks: string[]) => {
  const parsed = ipaddr.parse(address);
  return blocks.some((cidr) => {
    const range = ipaddr.parseCIDR(cidr);
    return range[0].kind() === parsed.kind() && parsed.match(range);
  });
};

describe('postback destinations in the IANA special-purpose registries', () => {
  it('refuses [::127.0.0.1], the IPv4-compatible form of loopback, as a URL and as an address', async () => {
    await expect(checkDestination('https://[::127.0.0.1]/cb', strict, async () => [])).rejects.toThrow(DestinationRefused);
    await expect(checkDestination('https://[::127.0.0.1]/cb', { allowLoopback: true }, async () => [])).rejects.toThrow(/IPv4-compatible/);
    expect(refusedAddress('::7f00:1', strict)).toBe('IPv4-compatible (deprecated)');
    expect(refusedAddress('::a9fe:a9fe', strict)).toBeDefined();
  });

  it.each([...IANA_IPV4, ...IANA_IPV6])('refuses the first, middle and last address of %s, bare and in a URL', async (cidr) => {
    for (const address of samples(cidr)) {
      expect({ address, why: refusedAddress(address, strict) }).toEqual({ address, why: expect.any(String) });
      const host = address.includes(':') ? `[${address}]` : address;
      await expect(checkDestination(`https://${host}/postback`, strict, async () => [])).rejects.toThrow(DestinationRefused);
    }
  });

  it('refuses any address inside any registry block', () => {
    fc.assert(
      fc.property(fc.constantFrom(...IANA_IPV4, ...IANA_IPV6).chain(inside), (address) => {
        expect(refusedAddress(address, strict)).toBeDefined();
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a host name that resolves to a registry address, even beside a public one', async () => {
    const resolve = async () => [
      { address: '93.184.215.14', family: 4 as const },
      { address: '2001::5efe:a00:1', family: 6 as const },
    ];
    await expect(checkDestination('https://partner.example/cb', strict, resolve)).rejects.toThrow(/teredo/i);
  });

  it('allows every other IPv4 address and every other IPv6 global unicast address', () => {
    const publicV4 = fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes) => ipaddr.fromByteArray([...bytes]).toString());
    const publicV6 = inside('2000::/3');
    fc.assert(
      fc.property(fc.oneof(publicV4, publicV6), (address) => {
        fc.pre(!inAny(address, [...IANA_IPV4, ...IANA_IPV6]) && address !== '168.63.129.16');
        expect(refusedAddress(address, strict)).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});
