import { DAY_MS, dayOf } from '../common/days';
import type { AuditBatch } from './types';

/**
 * Audit object keys: audit/yyyy/mm/dd/<company_id>/<app_id>/<body sha256>.jsonl.gz, by UTC receive
 * day, so one listing finds an app's objects of a day and a retried batch lands on the same key.
 */
const PREFIX = 'audit/';
const SUFFIX = '.jsonl.gz';

export function auditKey(batch: Pick<AuditBatch, 'receivedMs' | 'companyId' | 'appId' | 'bodySha256'>): string {
  return `${PREFIX}${dayPath(batch.receivedMs)}/${batch.companyId}/${batch.appId}/${batch.bodySha256}${SUFFIX}`;
}

/** The prefix of an app's audit objects received on one UTC day (yyyy-mm-dd). */
export function auditDayPrefix(day: string, companyId: string, appId: string): string {
  return `${PREFIX}${day.split('-').join('/')}/${companyId}/${appId}/`;
}

/** The company, app and body hash an audit key names; undefined for a key not of that form. */
export function batchOfKey(key: string): Pick<AuditBatch, 'companyId' | 'appId' | 'bodySha256'> | undefined {
  const [, , , , companyId, appId, name] = key.split('/');
  if (companyId === undefined || appId === undefined || name === undefined) return undefined;
  return { companyId, appId, bodySha256: name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name };
}

/** yyyy/mm/dd of an instant (UTC); the last day is kept, as nearly every batch is received on it. */
let lastDay: { number: number; path: string } | undefined;
function dayPath(ms: number): string {
  const number = Math.floor(ms / DAY_MS);
  if (lastDay?.number !== number) lastDay = { number, path: dayOf(ms).split('-').join('/') };
  return lastDay.path;
}
