/**
 * An app's signing secrets (docs/secrets.md, "Rotating an app's signing secret"). Every build of
 * an app embeds the secret it shipped with, and builds stay installed for months, so a rotation
 * keeps the secrets it replaced verifying for a grace period the operator chooses: new builds
 * sign with the current secret, old ones with theirs until its grace ends.
 */
export interface SigningKeys {
  /** The secret new builds embed (`app show`). */
  readonly current: string;
  /** Secrets replaced by rotations, each verifying until its `until_ms`; newest first. */
  readonly previous: readonly RetiredSecret[];
}

export interface RetiredSecret {
  readonly secret: string;
  readonly until_ms: number;
}

/** The longest grace a rotation may give the secret it replaces. */
export const MAX_GRACE_DAYS = 365;
/**
 * Retired secrets kept at once: an operator who rotates again while an earlier grace runs keeps
 * both old builds working; past this many, the one whose grace ends first is dropped.
 */
export const MAX_RETIRED_SECRETS = 4;

/** The secrets a signature may be made with at `nowMs`: the current one first. */
export function verifyingSecrets(keys: SigningKeys, nowMs: number): string[] {
  return [keys.current, ...keys.previous.filter((retired) => retired.until_ms > nowMs).map((retired) => retired.secret)];
}

/**
 * The keys after a rotation at `nowMs` to `next`: the current secret retired with `graceMs` to
 * go, the retired ones whose grace has ended dropped, at most MAX_RETIRED_SECRETS kept.
 */
export function rotated(keys: SigningKeys, next: string, nowMs: number, graceMs: number): SigningKeys {
  const stillValid = keys.previous.filter((retired) => retired.until_ms > nowMs);
  const previous = graceMs > 0 ? [{ secret: keys.current, until_ms: nowMs + graceMs }, ...stillValid] : stillValid;
  return {
    current: next,
    previous: [...previous].sort((a, b) => b.until_ms - a.until_ms).slice(0, MAX_RETIRED_SECRETS),
  };
}
