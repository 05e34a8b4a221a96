import type { AuditRecord } from './record';
import type { AuditBatch, AuditLine } from './types';

/** What putBatch did: wrote the object, or found it written by an earlier attempt of the batch. */
export type AuditWrite = 'stored' | 'already_stored';

/** Where ingest writes audit objects (functions/adapters/audit-store.ts). */
export interface AuditWriter {
  /**
   * Writes a batch's audit object once: a retry of the same bytes the same day finds its key taken,
   * and the first attempt's object stays.
   */
  putBatch(key: string, batch: AuditBatch, record: AuditRecord): Promise<AuditWrite>;
  /** Replaces an audit object whatever is stored. */
  replace(key: string, batch: AuditBatch, lines: readonly AuditLine[]): Promise<void>;
}

/** Where the aggregator, `admin rebuild` and the privacy drain read audit objects (functions/adapters/audit-reader.ts). */
export interface AuditObjects {
  /** An object's lines; AuditObjectError (decode.ts) when it is missing or unreadable. */
  lines(key: string): Promise<AuditLine[]>;
  /** Every key under a prefix (keys.ts, auditDayPrefix), in key order. */
  keys(prefix: string): Promise<string[]>;
}

/** What the privacy drain does to audit objects (functions/adapters/audit-eraser.ts). */
export interface AuditErasure {
  /** The object gone, older versions too. */
  delete(key: string): Promise<void>;
  /** The object put again with these lines only, and its older versions gone. */
  rewrite(key: string, lines: readonly AuditLine[]): Promise<void>;
}
