import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The request signature of the event API (docs/architecture.md section 4): lowercase hex
 * HMAC-SHA256(key = the signing secret string as UTF-8, message = the body bytes as sent).
 * The SDK client signs with the same function the server verifies with.
 */
export function signBody(signingSecret: string, body: Uint8Array): string {
  return mac(signingSecret, body).toString('hex');
}

/**
 * Lowercase only, as the interface says: the usual signers (our client, openssl dgst, Node's
 * digest('hex'), Python's hexdigest()) write lowercase, so an upper-case header would be a second
 * spelling of one signature that only a hand-rolled signer sends; it is refused like any mismatch.
 */
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Constant-time check of a signature header. A header that is not 64 lowercase hex characters
 * cannot be a valid signature and is just a mismatch: no separate code tells a prober what it got
 * wrong.
 */
export function isValidSignature(signingSecret: string, body: Uint8Array, signature: string): boolean {
  if (!SIGNATURE_PATTERN.test(signature)) return false;
  return timingSafeEqual(mac(signingSecret, body), Buffer.from(signature, 'hex'));
}

/** A string key is taken as its UTF-8 bytes (Node's rule), with no Buffer made for it per request. */
function mac(signingSecret: string, body: Uint8Array): Buffer {
  return createHmac('sha256', signingSecret).update(body).digest();
}
