import type { PostbackKeys } from './postback-keys';
import {
  judgePostback,
  type PostbackKind,
  type PostbackRecord,
  type PostbackRefusal,
  postbackObjectKey,
  readPostback,
} from './postback-record';
import { type CountOutcome, countPostback, type SkanCountingPorts } from './skan-report';

/**
 * A claim still pending after this long is taken to have failed (its delivery died between the
 * claim and the record, or could not write the record): far above the function's 10 s timeout,
 * far below the hours between Apple's retries.
 */
export const CLAIM_LAPSE_MS = 60_000;

/** One delivery's claim on a transaction-id. */
export interface PostbackClaim {
  readonly transactionId: string;
  readonly kind: PostbackKind;
  readonly verified: boolean;
  /** Random per delivery: only the claimant marks its claim stored or releases it. */
  readonly claimId: string;
  /**
   * Where the record goes when the id has no record of this standing yet: a claim keeps the key
   * an earlier claim of the same standing (verified, or not) chose, so a verified postback has one
   * object, and an invalid one another, under the prefix that expires.
   */
  readonly objectKey: string;
  readonly nowMs: number;
  /** An invalid postback's expiry (epoch seconds): its item goes with its record. Absent for a verified one, which is kept. */
  readonly expiresAt?: number;
}

/** Whoever holds a transaction-id, as the ledger keeps it. */
export interface PostbackHolder {
  readonly verified: boolean;
  /** Its record is written; otherwise its delivery is still writing it, or died trying. */
  readonly stored: boolean;
  readonly claimedMs: number;
}

export type ClaimResult =
  | {
      readonly kind: 'claimed';
      readonly objectKey: string;
      readonly replaced?: PostbackHolder;
      /**
       * A verified claim: when the id's first verified claim was made (this one's nowMs if it is
       * the first). The report takes the postback's day from it, so a retry on a later day writes
       * the same report item.
       */
      readonly firstVerifiedMs?: number;
    }
  | { readonly kind: 'held'; readonly holder?: PostbackHolder };

/**
 * Who may take a transaction-id. Anybody, when nobody holds it. Nobody may take a verified
 * postback's place but another verified delivery, and that only once its claim has lapsed
 * unstored. A pending claim is left alone until it lapses, so two deliveries never write one
 * object at once. A verified postback replaces a stored invalid one: a forged postback sent
 * first must not shut the genuine one out. So a stored verified postback is never replaced.
 */
export function mayTakeOver(holder: PostbackHolder | undefined, incoming: { readonly verified: boolean }, nowMs: number): boolean {
  if (!holder) return true;
  if (holder.verified && !incoming.verified) return false;
  if (!holder.stored) return holder.claimedMs < nowMs - CLAIM_LAPSE_MS;
  return incoming.verified && !holder.verified;
}

/** Where postbacks are filed, once per transaction-id (functions/adapters/skan-store.ts). */
export interface PostbackFiling {
  /**
   * Takes the claim's transaction-id exactly when mayTakeOver allows, in one conditional write,
   * so concurrent deliveries cannot both win. The winner learns the object key to write (the one
   * an earlier claim of the same standing chose, if any: one object per id and standing) and whom
   * it replaced; a loser learns the current holder. An invalid claim sets the item's expiry, a
   * verified one removes it.
   */
  claim(claim: PostbackClaim): Promise<ClaimResult>;
  /** Writes the record; the same key again overwrites it. */
  putRecord(objectKey: string, record: PostbackRecord): Promise<void>;
  /** The claim's record is written; does nothing when another delivery has taken the id since. */
  markStored(claim: PostbackClaim): Promise<void>;
  /** Gives up a claim whose record was not written, so Apple's retry takes the id at once rather than after CLAIM_LAPSE_MS. */
  release(claim: PostbackClaim): Promise<void>;
}

export interface SkanPostbackPorts {
  readonly keys: PostbackKeys;
  readonly filing: PostbackFiling;
  /** The SKAN report (docs/ios.md section 3); without it postbacks are filed and not counted. */
  readonly report?: SkanCountingPorts;
  newClaimId(): string;
}

export interface PostbackRequest {
  /** The body bytes as sent. */
  readonly body: Uint8Array;
  readonly receivedMs: number;
}

export type PostbackOutcome =
  | { readonly kind: 'refused'; readonly refusal: PostbackRefusal }
  | {
      readonly kind: 'stored';
      readonly record: PostbackRecord;
      readonly objectKey: string;
      readonly replaced?: PostbackHolder;
      /** What the report made of it (absent without a report). */
      readonly counted?: CountOutcome;
      /** The record is written but its claim could not be marked stored: it lapses, and a later verified copy may overwrite the record. */
      readonly markFailure?: unknown;
    }
  /** The id is taken by a stored postback this one may not replace: nothing is written. */
  | { readonly kind: 'duplicate'; readonly record: PostbackRecord; readonly holder: PostbackHolder }
  /** Another delivery of the id is being stored right now (or died doing it): retry later. */
  | { readonly kind: 'in_progress'; readonly record: PostbackRecord }
  | {
      readonly kind: 'store_failed';
      readonly step: 'claim' | 'record' | 'report';
      readonly record: PostbackRecord;
      readonly failure: unknown;
    };

/**
 * POST /skan-postback: read the body, check the signature, then file the record once per
 * transaction-id. The order makes a retry harmless: the id is claimed before the record is
 * written, so a copy (or a replay with other unsigned conversion values) never overwrites what
 * is filed, and a claim whose record was not written is released (or lapses) so Apple's retry
 * stores it. An invalid signature is filed too, marked invalid (Apple retries anything but 200),
 * but only its defined fields and only until it expires: anybody can send one. Between the
 * record and the claim's mark the postback is counted in the SKAN report (countPostback): a
 * failure there releases the claim too, and the retry writes the same report item.
 */
export async function takePostback(ports: SkanPostbackPorts, request: PostbackRequest): Promise<PostbackOutcome> {
  const read = readPostback(request.body);
  if (!read.ok) return { kind: 'refused', refusal: read.refusal };
  const record = judgePostback(read.body, ports.keys, request.receivedMs);
  if (!record) return { kind: 'refused', refusal: 'bad_postback' };

  const claim: PostbackClaim = {
    transactionId: record.transaction_id,
    kind: record.kind,
    verified: record.verified,
    claimId: ports.newClaimId(),
    objectKey: postbackObjectKey(record),
    nowMs: request.receivedMs,
    ...(record.expires_at === undefined ? {} : { expiresAt: record.expires_at }),
  };
  let claimed: ClaimResult;
  try {
    claimed = await ports.filing.claim(claim);
  } catch (failure) {
    return { kind: 'store_failed', step: 'claim', record, failure };
  }
  if (claimed.kind === 'held') {
    const { holder } = claimed;
    return holder?.stored ? { kind: 'duplicate', record, holder } : { kind: 'in_progress', record };
  }

  try {
    await ports.filing.putRecord(claimed.objectKey, record);
  } catch (failure) {
    // If the release fails too, the claim lapses after CLAIM_LAPSE_MS: Apple's retry comes later still.
    await ports.filing.release(claim).catch(() => undefined);
    return { kind: 'store_failed', step: 'record', record, failure };
  }
  let counted: CountOutcome | undefined;
  if (ports.report) {
    try {
      counted = await countPostback(ports.report, record, claimed.firstVerifiedMs ?? request.receivedMs);
    } catch (failure) {
      // The record is filed but not counted: the claim is released, so Apple's retry (the same
      // record, the same report item) counts it. A report item written twice is one item.
      await ports.filing.release(claim).catch(() => undefined);
      return { kind: 'store_failed', step: 'report', record, failure };
    }
  }
  const stored = { kind: 'stored', record, objectKey: claimed.objectKey, replaced: claimed.replaced, counted } as const;
  try {
    await ports.filing.markStored(claim);
  } catch (markFailure) {
    // The record is safe in the audit store, which is what Apple's 200 promises.
    return { ...stored, markFailure };
  }
  return stored;
}
