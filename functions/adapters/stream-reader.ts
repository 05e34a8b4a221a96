import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { StreamListing, StreamSource } from '../domain/raw-data/stream';
import { streamAppPrefix } from '../domain/raw-data/stream-objects';
import { LANE_NUMBERS, type LaneOpening, type LedgerLanes } from '../domain/raw-data/watermark';
import { dynamoClient } from '../shared/clients/dynamo';
import { s3Client } from '../shared/clients/s3';
import { StreamStore } from './stream-store';

/**
 * The event stream as its readers see it (functions/domain/raw-data/stream.ts): an app's stream
 * objects listed in key order from a name on, and each object's events. Objects are read with the
 * aggregator's own StreamStore (one codec: functions/domain/raw-data/stream-objects.ts).
 */
export class StreamReader implements StreamSource {
  private readonly store: StreamStore;

  constructor(private readonly bucket: string) {
    this.store = new StreamStore(bucket);
  }

  /** One ListObjectsV2 from just after `after` (StartAfter), at most `max` keys (S3 gives at most 1,000). */
  async list(appId: string, after: string, max: number): Promise<StreamListing> {
    const prefix = streamAppPrefix(appId);
    const page = await s3Client().send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: prefix,
        MaxKeys: max,
        ...(after === '' ? {} : { StartAfter: `${prefix}${after}` }),
      }),
    );
    const objects = (page.Contents ?? []).flatMap((object) =>
      object.Key?.startsWith(prefix) ? [{ name: object.Key.slice(prefix.length), size: object.Size ?? 0 }] : [],
    );
    return { objects, truncated: page.IsTruncated === true };
  }

  /**
   * Each line's `event` (undefined for a line without one). An object gone between the LIST and
   * the GET (a privacy deletion that left it empty) has no lines.
   */
  async lines(appId: string, name: string): Promise<readonly unknown[]> {
    const lines = await this.store.get(`${streamAppPrefix(appId)}${name}`);
    return (lines ?? []).map((line) => (line as { event?: unknown } | null)?.event);
  }
}

/**
 * The ledger's lanes for the watermark (functions/domain/raw-data/watermark.ts): the LANES items
 * `lane#<n>` in one consistent BatchGetItem (at most 100 keys a call), only the attributes the
 * watermark needs. A lane item costs one read unit (they are far under 4 KB).
 */
export class LedgerLaneReader implements LedgerLanes {
  constructor(private readonly tableName: string) {}

  async lanes(): Promise<readonly LaneOpening[]> {
    const lanes: LaneOpening[] = [];
    let unread: Record<string, unknown>[] = LANE_NUMBERS.map((lane) => ({ pk: `lane#${lane}` }));
    // DynamoDB may leave keys unprocessed under load: asked again, a few times.
    for (let attempt = 0; unread.length > 0; attempt++) {
      if (attempt === 5) throw new Error('ledger: lanes left unread by the batch read');
      const { Responses, UnprocessedKeys } = await dynamoClient().send(
        new BatchGetCommand({
          RequestItems: {
            [this.tableName]: {
              Keys: unread,
              ConsistentRead: true,
              ProjectionExpression: 'pk, seq, applied, opened_ms, apps',
            },
          },
        }),
      );
      for (const item of Responses?.[this.tableName] ?? []) lanes.push(laneOf(item));
      unread = UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return lanes;
  }
}

function laneOf(item: Record<string, unknown>): LaneOpening {
  return {
    seq: Number(item.seq ?? 0),
    applied: Number(item.applied ?? 0),
    ...(typeof item.opened_ms === 'number' ? { openedMs: item.opened_ms } : {}),
    ...(Array.isArray(item.apps) ? { apps: item.apps.map(String) } : {}),
  };
}
