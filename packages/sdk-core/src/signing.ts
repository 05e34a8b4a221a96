import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { gzipSync } from 'fflate';

/** The headers of a signed request (docs/ingestion.md, "Authentication"). */
export const HEADERS = {
  companyKey: 'x-service-company-key',
  appKey: 'x-service-app-key',
  signature: 'x-service-signature',
  sdk: 'x-service-sdk',
} as const;

export interface Credentials {
  readonly companyKey: string;
  readonly appKey: string;
  /** The app's signing secret, which every build embeds (docs/secrets.md: assume it can be read out). */
  readonly signingSecret: string;
}

/** Hex HMAC-SHA256 of the bytes as sent, keyed by the secret's UTF-8 bytes: what the service verifies. */
export function signature(secret: string, body: Uint8Array): string {
  return bytesToHex(hmac(sha256, utf8ToBytes(secret), body));
}

/** The body (gzipped when asked) and the headers that sign it. */
export function signedBody(
  credentials: Credentials,
  payload: unknown,
  options: { gzip: boolean; sdkVersion: string },
): { body: Uint8Array; headers: Record<string, string> } {
  const json = utf8ToBytes(JSON.stringify(payload));
  const body = options.gzip ? gzipSync(json) : json;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [HEADERS.companyKey]: credentials.companyKey,
    [HEADERS.appKey]: credentials.appKey,
    [HEADERS.signature]: signature(credentials.signingSecret, body),
    [HEADERS.sdk]: options.sdkVersion,
  };
  if (options.gzip) headers['content-encoding'] = 'gzip';
  return { body, headers };
}
