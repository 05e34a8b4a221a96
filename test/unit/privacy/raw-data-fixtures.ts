import { MemoryLedger } from '../../../functions/adapters/memory/aggregate-store';
import { MemoryStreamStore } from '../../../functions/adapters/memory/stream-store';
import { tokenOf } from '../../../functions/domain/aggregation/lease';
import { buildClick, type ClickRecord } from '../../../functions/domain/links/click';
import type { RawDataPorts } from '../../../functions/domain/privacy/raw-data';
import type { ExportPorts } from '../../../functions/domain/raw-data/export';
import { hourOf } from '../../../functions/domain/raw-data/export-layout';
import type { StreamListing, StreamSource } from '../../../functions/domain/raw-data/stream';
import { type StreamLine, streamAppPrefix, streamName } from '../../../functions/domain/raw-data/stream-objects';
import type { LaneOpening } from '../../../functions/domain/raw-data/watermark';

/** The raw data of an app in memory, for the privacy drain's tests: stream objects, export files, the ledger's marks and lanes. */

export const APP = 'app_0123456789abcdef0123';
export const GONE = '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
export const DAY = Date.UTC(2026, 2, 10); // 2026-03-10
export const MIN = 60_000;
export const uuidOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
export const auditKeyOf = (name: string, day = DAY) =>
  `audit/${new Date(day).toISOString().slice(0, 10).split('-').join('/')}/com_1/${APP}/${name}.jsonl.gz`;

/** A counted event's stream line, from the audit object `auditKey`; an install line (with its decision) when `install`. */
export function line(id: string, installUuid: string, receivedMs: number, auditKey: string, install = false): StreamLine {
  return {
    o: tokenOf(auditKey),
    event: {
      event_id: id,
      event_name: install ? 'install' : 'purchase',
      install_uuid: installUuid,
      ts_ms: receivedMs - 2_000,
      corrected_ts: receivedMs - 1_000,
      received_ms: receivedMs,
      revenue_usd: install ? null : 1.5,
      platform: 'ios',
      properties: null,
      country: 'DE',
      attribution: null,
    },
    ...(install
      ? {
          install: {
            first: true,
            previous_install_event_id: null,
            decision: {
              partner: 'meta',
              attribution_type: 'deterministic',
              rule: 'click_id',
              reinstall: false,
              click_id: `click-${id}`,
              click_ms: receivedMs - 60_000,
              fraud_reasons: [],
            },
          },
        }
      : {}),
  } as StreamLine;
}

export function click(id: string, tsMs: number): ClickRecord {
  return buildClick({
    clickId: id,
    link: { link_id: 'Lk1', app_id: APP, company_id: 'com_1', partner: 'meta', campaign: 'spring', lookback_days: 7 },
    address: { ip: '203.0.113.77', block: '203.0.113.0/24' },
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)',
    platform: 'ios',
    country: 'US',
    asn: 64500,
    query: { click_id: 'partner-click-1', sub1: 's1' },
    nowMs: tsMs,
  });
}

/** The export bucket (stream objects, export files) and the ledger, in memory. */
export class RawWorld {
  readonly stream = new MemoryStreamStore();
  readonly files = new Map<string, Uint8Array>();
  readonly ledger = new MemoryLedger();
  readonly clicks: ClickRecord[] = [];
  lanes: LaneOpening[] = [];
  readonly reads: string[] = [];
  /** The drain's clock: a pause moves it on, and runs `onPause` (a lane finishing meanwhile). */
  nowMs = Date.UTC(2026, 3, 20);
  onPause?: () => void;
  readonly clock = {
    nowMs: () => this.nowMs,
    pause: async (ms: number) => {
      this.nowMs += ms;
      this.onPause?.();
    },
    timeLeftMs: () => this.timeLeftMs,
  };
  /** What the drain function has left of its time. */
  timeLeftMs = 600_000;
  private seq = 0;

  /** An apply's stream object opened at `openedMs`, and the marks of the audit objects its lines came from (unless `marks` is false). */
  apply(openedMs: number, lines: readonly StreamLine[], options: { marks?: boolean; lane?: number } = {}): string {
    this.seq += 1;
    const stamp = { lane: options.lane ?? 0, seq: this.seq, openedMs };
    const key = `${streamAppPrefix(APP)}${streamName(stamp)}`;
    this.stream.objects.set(key, structuredClone([...lines]));
    if (options.marks !== false)
      for (const token of new Set(lines.map((stored) => stored.o)))
        this.ledger.objectMarks.set(token, { kind: 'included', stamp, appId: APP, journal: {} });
    return key;
  }

  source(): StreamSource & Pick<StreamSource, 'list'> {
    const prefix = streamAppPrefix(APP);
    return {
      list: async (appId, after, max): Promise<StreamListing> => {
        const names = [...this.stream.objects.keys()]
          .filter((key) => key.startsWith(streamAppPrefix(appId)))
          .map((key) => key.slice(prefix.length))
          .filter((name) => name > after)
          .sort();
        return { objects: names.slice(0, max).map((name) => ({ name, size: 100 })), truncated: names.length > max };
      },
      // As functions/adapters/stream-reader.ts reads them: each line's event, undefined for an erased line.
      lines: async (appId, name) =>
        ((await this.stream.get(`${streamAppPrefix(appId)}${name}`)) ?? []).map((stored) => (stored as { event?: unknown }).event),
    };
  }

  ports(): RawDataPorts {
    return {
      marks: this.ledger,
      lanes: { lanes: async () => this.lanes },
      stream: {
        get: async (key) => {
          this.reads.push(key);
          return this.stream.get(key);
        },
        put: (key, lines) => this.stream.put(key, lines),
        delete: (key) => this.stream.delete(key),
      },
      streamNames: this.source(),
      exportFiles: {
        get: async (key) => this.files.get(key),
        put: async (key, body) => void this.files.set(key, body),
        delete: async (key) => void this.files.delete(key),
      },
    };
  }

  /** The export's ports over the same stream objects, clicks and files. */
  exportPorts(): ExportPorts {
    return {
      stream: { listing: this.source(), objects: this.stream },
      clicks: { ofHour: async (appId, hour) => this.clicks.filter((c) => c.app_id === appId && hourOf(c.ts_ms) === hour) },
      postbacks: { receivedBetween: async () => [] },
      files: this.ports().exportFiles,
      checkpoints: { get: async () => undefined, put: async () => undefined },
    };
  }

  /** Every event id of the stream, in order, erased lines as '-'. */
  events(): string[] {
    return this.stream.lines().map((stored) => (stored as Partial<StreamLine>).event?.event_id ?? '-');
  }
}
