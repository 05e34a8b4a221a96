import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { StreamListing, StreamSource } from '../domain/raw-data/stream';
import { streamAppPrefix } from '../domain/raw-data/stream-objects';
import { LANE_NUMBERS, type LaneOpening, type LedgerLanes } from '../domain/raw-data/watermark';
import { s3Client } from '../shared/clients/s3';
import { AggregationLedgerStore } from './aggregate-store';
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
 * The ledger's lanes for the watermark (functions/domain/raw-data/watermark.ts): the aggregator's
 * own read of its lanes (AggregationLedgerStore.lanes, one consistent BatchGetItem of the LANES
 * items `lane#<n>`), each lane's numbers and its open apply's opening. A lane item costs one read
 * unit (they are far under 4 KB).
 */
export class LedgerLaneReader implements LedgerLanes {
  private readonly ledger: AggregationLedgerStore;

  constructor(tableName: string) {
    this.ledger = new AggregationLedgerStore(tableName);
  }

  async lanes(): Promise<readonly LaneOpening[]> {
    const lanes = await this.ledger.lanes(LANE_NUMBERS);
    return [...lanes.values()].map(({ seq, applied, openedMs, apps }) => ({
      seq,
      applied,
      ...(openedMs === undefined ? {} : { openedMs, apps }),
    }));
  }
}
