/**
 * The result of checking a postback's signature: verified with a named key, or not, and why. The
 * key is named on a failure too when it is known (a bad signature under Apple's P-256 key).
 */
export type Verification<Reason extends string> =
  | { readonly verified: true; readonly keyId: string }
  | { readonly verified: false; readonly reason: Reason; readonly keyId?: string; readonly field?: string };
