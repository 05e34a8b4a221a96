import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The request signature of the event API (DESIGN section 4): lowercase hex
 * HMAC-SHA256(key = the signing secret string as UTF-8, message = the body bytes as sent).
 * The SDK client signs with the same function the server verifies with.
 */
export function signBody(signingSecret: string, body: Uint8Array): string {
  return mac(signingSecret, body).toString('hex');
}

const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/i;

/**
 * Constant-time check of a signature header. A header that is not 64 hex characters cannot be a
 * valid signature and is just a mismatch: no separate code tells a prober what it got wrong.
 */
export function isValidSignature(signingSecret: string, body: Uint8Array, signature: string): boolean {
  if (!SIGNATURE_PATTERN.test(signature)) return false;
  return timingSafeEqual(mac(signingSecret, body), Buffer.from(signature, 'hex'));
}

function mac(signingSecret: string, body: Uint8Array): Buffer {
  return createHmac('sha256', Buffer.from(signingSecret, 'utf8')).update(body).digest();
}
