import { isIPv4, isIPv6 } from 'node:net';

/**
 * A client address in one spelling, and the network block it belongs to: the IPv4 /24 or the
 * IPv6 /48 (the usual allocation to one customer site), which is what the click rate limit keys on.
 *
 * IPv6 is written the RFC 5952 way (lower case, longest zero run compressed), so every spelling
 * of one address is one honeypot block and one rate-limit key. IPv4-mapped IPv6 (::ffff:a.b.c.d,
 * in either notation) is the IPv4 address.
 */
export interface ClientAddress {
  readonly ip: string;
  readonly block: string;
}

export function clientAddress(raw: string): ClientAddress {
  const trimmed = raw.trim().toLowerCase();
  if (isIPv4(trimmed)) return { ip: trimmed, block: `${trimmed.split('.').slice(0, 3).join('.')}.0/24` };
  const canonical = isIPv6(trimmed) ? canonicalIPv6(trimmed) : undefined;
  if (canonical === undefined) {
    // Not an address (only possible locally, from a made-up X-Forwarded-For): it is its own block.
    return { ip: trimmed, block: trimmed };
  }
  const [, high, low] = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical) ?? [];
  if (high !== undefined && low !== undefined) return clientAddress(hexPairToIPv4(high, low));
  const hextets = expandIPv6(canonical);
  return { ip: canonical, block: `${canonicalIPv6(`${hextets.slice(0, 3).join(':')}::`)}/48` };
}

/** The WHATWG URL parser serializes IPv6 hosts in the RFC 5952 form; zone ids make it throw. */
function canonicalIPv6(address: string): string | undefined {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

function hexPairToIPv4(high: string, low: string): string {
  const h = parseInt(high, 16);
  const l = parseInt(low, 16);
  return [h >> 8, h & 0xff, l >> 8, l & 0xff].join('.');
}

/** Eight hextets of a canonical IPv6 address (no embedded IPv4: the canonical form has none). */
function expandIPv6(canonical: string): string[] {
  const [head, tail] = canonical.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right];
}
