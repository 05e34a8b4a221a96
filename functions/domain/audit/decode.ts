import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { AuditLine } from './types';

const gunzipAsync = promisify(gunzip);

/** Audit objects hold at most 8 MiB of JSON (the decompressed batch limit) plus their line envelopes. */
export const MAX_AUDIT_JSON_BYTES = 32 * 1024 * 1024;

/** Why an audit object cannot be read: it is not there, or it is not gzip JSON Lines. */
export type AuditObjectFault = 'missing_object' | 'unreadable_object';

/**
 * An audit object that will never become readable as it is. Each reader decides what that means
 * for it: the aggregator and `admin rebuild` take it as a poison message, the privacy drain takes
 * a missing object as one with nothing left to erase.
 */
export class AuditObjectError extends Error {
  constructor(
    readonly reason: AuditObjectFault,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'AuditObjectError';
  }
}

/**
 * The lines of an audit object as stored (encode.ts): gzip, at most MAX_AUDIT_JSON_BYTES of JSON
 * Lines once inflated, each line parsed with JSON.parse. AuditObjectError (unreadable_object) when
 * it is anything else; `key` only names the object in the error.
 */
export async function decodeAuditObject(key: string, bytes: Uint8Array): Promise<AuditLine[]> {
  let text: string;
  try {
    text = (await gunzipAsync(bytes, { maxOutputLength: MAX_AUDIT_JSON_BYTES })).toString('utf8');
  } catch {
    throw new AuditObjectError('unreadable_object', `${key} is not gzip within ${MAX_AUDIT_JSON_BYTES} bytes`);
  }
  try {
    return text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as AuditLine);
  } catch {
    throw new AuditObjectError('unreadable_object', `${key} is not JSON Lines`);
  }
}
