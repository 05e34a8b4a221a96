import { createHash, timingSafeEqual } from 'node:crypto';
import { originVerifyHeader } from '../../lib/function-constants';
import type { HttpEvent } from './http';

/**
 * Who is on the other end of a request. In AWS, CloudFront adds CloudFront-Viewer-Address,
 * -Country and -ASN and overwrites any value a client sent; it also adds a secret origin header
 * (x-origin-verify) that only the distribution knows. Those viewer headers are believed only
 * when the secret matches, so a client that calls the API Gateway URL directly cannot forge its
 * address or country: it gets the connection's own source address instead.
 *
 * Locally, the runtime plays CloudFront's part. With TRUST_PROXY=1 (local only) it takes the
 * address from X-Forwarded-For and lets simulations set the country and ASN headers.
 */
export interface Viewer {
  readonly ip: string;
  readonly country?: string;
  readonly asn?: number;
}

/** A request's headers, as a route's event and an authorizer's event both carry them (lower-case names). */
export interface WithHeaders {
  readonly headers?: Readonly<Record<string, string | undefined>>;
}

/** Requests the origin check (functions/shared/http.ts) found to carry the origin secret. */
const throughEdge = new WeakSet<HttpEvent>();

/** Called by the origin check alone, once a request's origin header matched. */
export function markFromEdge(event: HttpEvent): void {
  throughEdge.add(event);
}

/**
 * The viewer of a request: CloudFront's headers when the request came through it (by default,
 * when the origin check found the secret on this very event), else the connection's address.
 */
export function viewerOf(event: HttpEvent, cameThroughEdge = throughEdge.has(event)): Viewer {
  const headers = event.headers ?? {};
  const sourceIp = event.requestContext?.http?.sourceIp ?? '0.0.0.0';
  if (!cameThroughEdge) return { ip: normalizeIp(sourceIp) };
  const address = headers['cloudfront-viewer-address'];
  const asn = Number(headers['cloudfront-viewer-asn']);
  return {
    ip: address ? normalizeIp(stripPort(address)) : normalizeIp(sourceIp),
    country: headers['cloudfront-viewer-country']?.toUpperCase() || undefined,
    asn: Number.isInteger(asn) && asn > 0 ? asn : undefined,
  };
}

/**
 * Whether a request came through CloudFront: it carries the secret origin header CloudFront adds
 * (lib/constructs/edge.ts). Both sides are hashed first, so timingSafeEqual compares equal-length
 * buffers and neither the time taken nor a length check tells a caller how close a guess was or
 * how long the secret is. An empty or unset secret matches nothing.
 */
export function fromEdge(event: WithHeaders, secret: string | undefined): boolean {
  const sent = event.headers?.[originVerifyHeader];
  if (!secret || sent === undefined) return false;
  return timingSafeEqual(sha256(sent), sha256(secret));
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * CloudFront-Viewer-Address is always "<ip>:<port>" ("198.51.100.10:46532",
 * "2001:db8::8:46532"), so the port is whatever follows the last colon.
 */
export function stripPort(address: string): string {
  if (address.startsWith('[')) return address.slice(1, address.indexOf(']'));
  const last = address.lastIndexOf(':');
  return last === -1 ? address : address.slice(0, last);
}

function normalizeIp(ip: string): string {
  const trimmed = ip.trim().toLowerCase();
  // IPv4-mapped IPv6 addresses (::ffff:1.2.3.4) are the IPv4 address for every purpose here.
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}
