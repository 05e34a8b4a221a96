import ipaddr from 'ipaddr.js';
import { specialPurposeOf } from './special-purpose';

/**
 * Server-side request forgery rules for partner postbacks (docs/postbacks.md). A postback URL is
 * set by an operator, but the service calls it from inside the customer's AWS account, where a
 * private or metadata address would reach things no partner should. So, both when a template is
 * set and before every send:
 *
 * - the scheme is https; plain http only to loopback, and only where the local runtime was
 *   started with POSTBACK_ALLOW_LOOPBACK=1 (the stack never sets it);
 * - the host is resolved and every address it resolves to must be public unicast: private,
 *   loopback, link-local, unique-local, carrier-grade NAT, multicast, reserved, NAT64 and
 *   IPv4-mapped forms of those, the cloud metadata addresses, every other block of the IANA
 *   special-purpose registries (./special-purpose.ts: IPv4-compatible ::/96, Teredo, 6to4, AS112,
 *   documentation...) and IPv6 outside global unicast 2000::/3 are refused;
 * - the request then connects to the address that was checked (the sender passes it as the
 *   socket's lookup), so a name that resolves differently a moment later (DNS rebinding) cannot
 *   send it elsewhere.
 */

export interface DestinationPolicy {
  /** Local runtime only (POSTBACK_ALLOW_LOOPBACK=1): http and https to IPv4 loopback (127.0.0.1) are allowed. */
  readonly allowLoopback: boolean;
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** All addresses of a host name (dns.lookup with all: true in the adapter). */
export type Resolve = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export type RefusedReason = 'scheme' | 'address' | 'unresolvable';

export class DestinationRefused extends Error {
  constructor(
    readonly reason: RefusedReason,
    message: string,
  ) {
    super(message);
    this.name = 'DestinationRefused';
  }
}

/** Addresses of cloud metadata services that are not in a refused range already. */
const METADATA = new Set(['168.63.129.16']);

/**
 * The process's policy. The variable is read by its literal name, which production bundles compile
 * to undefined (lib/constructs/service-function.ts, LOCAL_ONLY_SWITCHES): loopback is never
 * allowed in AWS, whatever a function's environment holds.
 */
export const policyFromEnv = (allowLoopback = process.env.POSTBACK_ALLOW_LOOPBACK): DestinationPolicy => ({
  allowLoopback: allowLoopback === '1',
});

/** Why an address may not be called, or undefined when it may. */
export function refusedAddress(address: string, policy: DestinationPolicy): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // process() turns an IPv4-mapped IPv6 address (::ffff:10.0.0.1) into the IPv4 address it carries.
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  if (range === 'loopback') return policy.allowLoopback && parsed.kind() === 'ipv4' ? undefined : 'loopback';
  if (range !== 'unicast') return range === 'linkLocal' && parsed.toString() === '169.254.169.254' ? 'metadata' : range;
  if (METADATA.has(parsed.toString())) return 'metadata';
  // The special-purpose blocks of the address as given too: an IPv4-mapped form of a public
  // address is still not a partner's endpoint.
  return specialPurposeOf(parsed) ?? specialPurposeOf(ipaddr.parse(address));
}

/**
 * The address to connect to for a postback URL: the first one the host resolves to, once every
 * one of them has passed. Throws DestinationRefused otherwise.
 */
export async function checkDestination(
  url: string,
  policy: DestinationPolicy,
  resolve: Resolve,
): Promise<{ url: URL; address: ResolvedAddress }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DestinationRefused('scheme', 'not a URL');
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowLoopback)) {
    throw new DestinationRefused(
      'scheme',
      policy.allowLoopback ? 'only https://, or http:// to a loopback address' : 'only https:// destinations are allowed',
    );
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: readonly ResolvedAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      throw new DestinationRefused(
        'unresolvable',
        `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
  }
  const [first] = addresses;
  if (!first) throw new DestinationRefused('unresolvable', `${host} does not resolve`);
  for (const { address } of addresses) {
    const why = refusedAddress(address, policy);
    if (why) throw new DestinationRefused('address', `${host === address ? address : `${host} resolves to ${address}`}, a ${why} address`);
  }
  // Plain http is for a local receiver only: every address must be loopback.
  if (parsed.protocol === 'http:' && addresses.some(({ address }) => refusedAddress(address, { allowLoopback: false }) !== 'loopback')) {
    throw new DestinationRefused('scheme', 'http:// is allowed to a loopback address only; use https://');
  }
  return { url: parsed, address: first };
}
