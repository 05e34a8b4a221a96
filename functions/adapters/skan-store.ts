import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PostbackRecord } from '../domain/skan/postback-record';
import {
  CLAIM_LAPSE_MS,
  type ClaimResult,
  type PostbackClaim,
  type PostbackFiling,
  type PostbackHolder,
} from '../domain/skan/take-postback';
import { dynamoClient } from '../shared/clients/dynamo';
import { s3Client } from '../shared/clients/s3';
import { isConditionFailure } from './aws-errors';

/**
 * Apple's postbacks filed once per transaction-id: the skan_postbacks table holds one item per
 * id (who holds it, whether its record is written and where), the audit bucket the JSON record.
 *
 * Item: transaction_id, postback_kind, verified, claim_id, claimed_ms, and stored_ms once the
 * record is written (absent while a delivery is writing it); object_key, where the verified
 * record is, and invalid_object_key, where an invalid one is (under the prefix that expires);
 * expires_at (the table's TTL) while the holder is invalid; first_verified_ms, when the id's
 * first verified claim was made (the SKAN report's day of it, whatever day a retry comes).
 */
export class SkanStore implements PostbackFiling {
  constructor(
    private readonly table: string,
    private readonly bucket: string,
  ) {}

  /**
   * One conditional UpdateItem, so two deliveries cannot both win. The condition is
   * mayTakeOver of functions/domain/skan/take-postback.ts written for DynamoDB: the id is free;
   * or its holder's claim lapsed unstored (and, for an invalid postback, the holder is invalid
   * too); or a verified postback meets a stored invalid one. if_not_exists keeps the object key
   * an earlier holder of the same standing chose, so an id has one verified object at most (and
   * one invalid one, until it expires). An update rather than a put: a put would replace the
   * object key before the old one could be read. An invalid holder's item expires with its
   * record; a verified one takes the expiry away.
   */
  async claim(claim: PostbackClaim): Promise<ClaimResult> {
    const condition = claim.verified
      ? 'attribute_not_exists(#id) OR (attribute_not_exists(#stored) AND #claimed < :lapsed) OR (attribute_exists(#stored) AND #verified = :false)'
      : 'attribute_not_exists(#id) OR (attribute_not_exists(#stored) AND #claimed < :lapsed AND #verified = :false)';
    const keyAttribute = claim.verified ? 'object_key' : 'invalid_object_key';
    const holder = `SET #kind = :kind, #verified = :verified, #claim = :claim, #claimed = :now, #key = if_not_exists(#key, :key)${
      claim.verified ? ', #first = if_not_exists(#first, :now)' : ''
    }`;
    try {
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.table,
          Key: { transaction_id: claim.transactionId },
          UpdateExpression:
            claim.expiresAt === undefined ? `${holder} REMOVE #stored, #expires` : `${holder}, #expires = :expires REMOVE #stored`,
          ConditionExpression: condition,
          ExpressionAttributeNames: {
            '#id': 'transaction_id',
            '#kind': 'postback_kind',
            '#verified': 'verified',
            '#claim': 'claim_id',
            '#claimed': 'claimed_ms',
            '#key': keyAttribute,
            '#stored': 'stored_ms',
            '#expires': 'expires_at',
            ...(claim.verified ? { '#first': 'first_verified_ms' } : {}),
          },
          ExpressionAttributeValues: {
            ':kind': claim.kind,
            ':verified': claim.verified,
            ':claim': claim.claimId,
            ':now': claim.nowMs,
            ':key': claim.objectKey,
            ':lapsed': claim.nowMs - CLAIM_LAPSE_MS,
            ':false': false,
            ...(claim.expiresAt === undefined ? {} : { ':expires': claim.expiresAt }),
          },
          ReturnValues: 'ALL_OLD',
        }),
      );
      const first = Attributes?.first_verified_ms;
      const firstVerifiedMs = claim.verified ? { firstVerifiedMs: typeof first === 'number' ? first : claim.nowMs } : {};
      if (!Attributes) return { kind: 'claimed', objectKey: claim.objectKey, ...firstVerifiedMs };
      return {
        kind: 'claimed',
        objectKey: String(Attributes[keyAttribute] ?? claim.objectKey),
        replaced: holderOf(Attributes),
        ...firstVerifiedMs,
      };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.table, Key: { transaction_id: claim.transactionId }, ConsistentRead: true }),
    );
    return { kind: 'held', holder: Item && holderOf(Item) };
  }

  /** The record as one JSON object; its metadata says enough to triage a listing without reading it. */
  async putRecord(objectKey: string, record: PostbackRecord): Promise<void> {
    await s3Client().send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: objectKey,
        Body: JSON.stringify(record),
        ContentType: 'application/json',
        Metadata: {
          'record-version': String(record.record_version),
          kind: record.kind,
          verified: String(record.verified),
          'received-ms': String(record.received_ms),
        },
      }),
    );
  }

  async markStored(claim: PostbackClaim): Promise<void> {
    await this.ifStillOurs(claim, 'SET stored_ms = :now', { ':now': claim.nowMs });
  }

  /** Lapses the claim at once (claimed_ms 0) rather than deleting it: its object key stays for whoever takes the id. */
  async release(claim: PostbackClaim): Promise<void> {
    await this.ifStillOurs(claim, 'SET claimed_ms = :zero', { ':zero': 0 }, 'attribute_not_exists(stored_ms)');
  }

  /** An update of our own claim; if another delivery has taken the id since, it is theirs and left alone. */
  private async ifStillOurs(claim: PostbackClaim, update: string, values: Record<string, unknown>, also?: string): Promise<void> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.table,
          Key: { transaction_id: claim.transactionId },
          UpdateExpression: update,
          ConditionExpression: also ? `claim_id = :claim AND ${also}` : 'claim_id = :claim',
          ExpressionAttributeValues: { ':claim': claim.claimId, ...values },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

function holderOf(item: Record<string, unknown>): PostbackHolder {
  return { verified: item.verified === true, stored: typeof item.stored_ms === 'number', claimedMs: Number(item.claimed_ms ?? 0) };
}
