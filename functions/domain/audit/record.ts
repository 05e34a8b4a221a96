import type { EventVerdict } from '../ingest/event-validation';
import { type AuditCounts, countsOf, encodeAuditObject, gzipJsonLines, jsonLinesFromBody, toJsonLines } from './encode';
import { type EventTexts, eventTexts } from './event-text';
import { type AuditConversions, auditLines } from './lines';
import type { AuditBatch, AuditLine } from './types';

/**
 * A batch's audit record as ingest hands it to the audit store: its counts, its lines, and the
 * object's bytes. The lines are made only when asked for: the bytes of a batch whose body is at
 * hand are written straight from its verdicts and the body (encode.ts, jsonLinesFromBody), the
 * very bytes toJsonLines writes for the lines.
 */
export interface AuditRecord extends AuditCounts {
  /** The lines the object holds (auditLines). */
  lines(): AuditLine[];
  /** The object's bytes: gzip JSON Lines, gunzipped exactly toJsonLines(lines()). */
  encode(): Promise<Buffer>;
}

/**
 * The record of a judged batch. Given `source`, the decompressed body that `events` was parsed
 * from or where eventTexts found each event in it, each event is copied from the body instead of
 * written out again with JSON.stringify, which cost more than the copy (docs/ingestion.md,
 * "Copying each event from the body"): the stored event is then the client's own JSON for it,
 * which parses to the same value.
 */
export function auditRecord(
  events: readonly unknown[],
  verdicts: readonly EventVerdict[],
  batch: AuditBatch,
  source?: Uint8Array | EventTexts,
  conversions?: AuditConversions,
): AuditRecord {
  const texts = source instanceof Uint8Array ? eventTexts(source, events.length) : source;
  let accepted = 0;
  for (const verdict of verdicts) if (verdict.status === 'accepted') accepted++;
  let made: AuditLine[] | undefined;
  const lines = () => {
    made ??= auditLines(events, verdicts, batch, conversions);
    return made;
  };
  return {
    accepted,
    rejected: verdicts.length - accepted,
    lines,
    encode: () => gzipJsonLines((texts && jsonLinesFromBody(events, verdicts, batch, texts, conversions)) ?? toJsonLines(lines())),
  };
}

/** The record of lines already made (the privacy drain's rewrite, a test's). */
export function recordOfLines(lines: readonly AuditLine[]): AuditRecord {
  return { ...countsOf(lines), lines: () => [...lines], encode: () => encodeAuditObject(lines) };
}
