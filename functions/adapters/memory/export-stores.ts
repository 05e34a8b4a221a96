import type { ClickRecord } from '../../domain/links/click';
import type {
  ExportCheckpoint,
  ExportCheckpoints,
  ExportClicks,
  ExportFiles,
  ExportPorts,
  ExportPostbacks,
  ExportStream,
} from '../../domain/raw-data/export';
import { hourOf } from '../../domain/raw-data/export-layout';
import type { StreamListing } from '../../domain/raw-data/stream';
import { encodeStreamLines, type StreamLine, streamAppPrefix } from '../../domain/raw-data/stream-objects';
import type { PostbackRecord } from '../../domain/skan/postback-record';

/**
 * The warehouse export's ports in memory (functions/adapters/export-store.ts), for the unit tests
 * and the export's measurement: each counts the S3 and DynamoDB requests its real adapter would make.
 */

export interface ExportRequests {
  /** S3 LIST (a page of at most 1,000 keys). */
  list: number;
  /** S3 GET (a stream object, a checkpoint, a postback record). */
  get: number;
  /** S3 PUT (a Parquet file, a checkpoint). */
  put: number;
  /** S3 DELETE (free). */
  delete: number;
  /** DynamoDB Query of one click_log shard of an hour (the old clicks table's by_app_hour, read until it is dropped, is not counted). */
  query: number;
}

export class MemoryExportWorld {
  /** Stream objects by full key, their lines as the aggregator wrote them. */
  readonly stream = new Map<string, StreamLine[]>();
  /** Compressed size of each stream object, as S3 would list it. */
  readonly sizes = new Map<string, number>();
  readonly clicks: ClickRecord[] = [];
  readonly postbacks: PostbackRecord[] = [];
  readonly files = new Map<string, Uint8Array>();
  readonly checkpoints = new Map<string, ExportCheckpoint>();
  readonly requests: ExportRequests = { list: 0, get: 0, put: 0, delete: 0, query: 0 };

  /** Writes a stream object (as the aggregator does), of its gzip size unless another is given. */
  putStream(appId: string, name: string, lines: readonly StreamLine[], size?: number): void {
    const key = `${streamAppPrefix(appId)}${name}`;
    this.stream.set(key, structuredClone([...lines]));
    this.sizes.set(key, size ?? encodeStreamLines(lines).byteLength);
  }

  ports(): ExportPorts {
    return {
      stream: this.streamPorts(),
      clicks: this.clickPorts(),
      postbacks: this.postbackPorts(),
      files: this.filePorts(),
      checkpoints: this.checkpointPorts(),
    };
  }

  private streamPorts(): ExportStream {
    return {
      listing: {
        list: async (appId: string, after: string, max: number): Promise<StreamListing> => {
          this.requests.list += 1;
          const prefix = streamAppPrefix(appId);
          const names = [...this.stream.keys()]
            .filter((key) => key.startsWith(prefix))
            .map((key) => key.slice(prefix.length))
            .filter((name) => name > after)
            .sort();
          const page = names.slice(0, max);
          return {
            objects: page.map((name) => ({ name, size: this.sizes.get(`${prefix}${name}`) ?? 0 })),
            truncated: names.length > max,
          };
        },
      },
      objects: {
        get: async (key: string) => {
          this.requests.get += 1;
          const lines = this.stream.get(key);
          return lines && structuredClone(lines);
        },
      },
    };
  }

  private clickPorts(): ExportClicks {
    return {
      ofHour: async (appId, hour) => {
        this.requests.query += 16;
        return this.clicks.filter((click) => click.app_id === appId && hourOf(click.ts_ms) === hour);
      },
    };
  }

  private postbackPorts(): ExportPostbacks {
    return {
      receivedBetween: async (fromMs, toMs) => {
        const found = this.postbacks.filter((record) => record.received_ms >= fromMs && record.received_ms < toMs);
        this.requests.list += 1;
        this.requests.get += found.length;
        return found;
      },
    };
  }

  private filePorts(): ExportFiles {
    return {
      put: async (key, body) => {
        this.requests.put += 1;
        this.files.set(key, body);
      },
      delete: async (key) => {
        this.requests.delete += 1;
        this.files.delete(key);
      },
    };
  }

  private checkpointPorts(): ExportCheckpoints {
    return {
      get: async (appId) => {
        this.requests.get += 1;
        return this.checkpoints.get(appId);
      },
      put: async (appId, checkpoint) => {
        this.requests.put += 1;
        this.checkpoints.set(appId, checkpoint);
      },
    };
  }
}
