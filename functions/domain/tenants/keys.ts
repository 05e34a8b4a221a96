import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../common/hashing';

/**
 * Identifiers and secrets (docs/architecture.md section 4). Everything comes from the CSPRNG; the formats are
 * part of the interface, so the patterns below are also what the edge validates against.
 */
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export const newCompanyKey = () => `co_live_${hex(16)}`;
export const newAppKey = () => `app_live_${hex(16)}`;
export const newServerKey = () => `srv_${hex(24)}`;
export const newSigningSecret = () => hex(32);
export const newCompanyId = () => `com_${hex(10)}`;
export const newAppId = () => `app_${hex(10)}`;
/** Link ids are public path segments: short, URL-safe and still unguessable (72 random bits). */
export const newLinkId = () => randomBytes(9).toString('base64url');

export const SERVER_KEY_PATTERN = /^srv_[0-9a-f]{48}$/;
export const COMPANY_KEY_PATTERN = /^co_live_[0-9a-f]{32}$/;
export const APP_KEY_PATTERN = /^app_live_[0-9a-f]{32}$/;

/** Server keys are stored only as this hash; the plain key is shown once, at creation. */
export function hashServerKey(serverKey: string): string {
  return sha256Hex(serverKey);
}
