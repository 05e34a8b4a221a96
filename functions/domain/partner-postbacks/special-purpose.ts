import ipaddr from 'ipaddr.js';

/**
 * The blocks of the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and its
 * updates; the registries as of 2025), with IPv4 multicast and IPv6 multicast beside them. A
 * postback is never sent to any of them, whether the registry calls the block globally reachable
 * or not: a partner's endpoint is ordinary unicast, and an anycast relay, a translation prefix or
 * a tunnel prefix (Teredo, 6to4, NAT64) can carry a request to an address inside someone's
 * network. ipaddr.js's own ranges cover most of these, not all (it calls ::7f00:1, the
 * IPv4-compatible form of 127.0.0.1, unicast), so the list is kept here and tested block by block.
 */
export const SPECIAL_PURPOSE_BLOCKS: readonly (readonly [cidr: string, name: string])[] = [
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private-use'],
  ['100.64.0.0/10', 'shared address space'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private-use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', '6to4 relay anycast (deprecated)'],
  ['192.168.0.0/16', 'private-use'],
  ['192.175.48.0/24', 'AS112 direct delegation'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['64:ff9b::/96', 'IPv4/IPv6 translation'],
  ['64:ff9b:1::/48', 'local-use IPv4/IPv6 translation'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy IPv6 prefix'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001::/32', 'Teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:3::/32', 'AMT'],
  ['2001:4:112::/48', 'AS112-v6'],
  ['2001:10::/28', 'ORCHID (deprecated)'],
  ['2001:20::/28', 'ORCHIDv2'],
  ['2001:30::/28', 'drone remote ID entity tags'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'AS112 direct delegation'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing (SRv6) SIDs'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
];

const parsedBlocks = SPECIAL_PURPOSE_BLOCKS.map(([cidr, name]) => ({ range: ipaddr.parseCIDR(cidr), name }));
/** IPv6 global unicast (RFC 4291): everything else of the IPv6 space is reserved or special. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/** The special-purpose block an address is in (its name), or undefined for ordinary global unicast. */
export function specialPurposeOf(address: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  const found = parsedBlocks.find(({ range }) => range[0].kind() === address.kind() && address.match(range));
  if (found) return found.name;
  if (address.kind() === 'ipv6' && !address.match(GLOBAL_UNICAST)) return 'outside IPv6 global unicast (2000::/3)';
  return undefined;
}
