import { sha256Hex } from '../common/hashing';
import { isPlainObject } from '../common/json';
import { UUID_PATTERN } from '../common/uuid';
import { EventApiError } from '../ingest/event-api';

/**
 * A right-to-be-forgotten request (docs/privacy.md). It is queued, never executed inline; the
 * receipt names the install only by a hash, so the receipts table holds nothing that identifies
 * a device once the drain has run.
 */
export interface PrivacyReceipt {
  request_id: string;
  app_id: string;
  company_id: string;
  /** SHA-256 hex of the lower-cased install_uuid. */
  install_hash: string;
  /** installKey: the by_install index, for `admin privacy show`. */
  app_install: string;
  received_ms: number;
  /** queued, then in_progress while the drain works on it (over several runs if need be), then done. */
  state: 'queued' | 'in_progress' | 'done';
}

/** The message on the privacy queue that privacy-drain consumes. */
export interface PrivacyMessage {
  version: 1;
  request_id: string;
  app_id: string;
  company_id: string;
  /** Lower-cased. */
  install_uuid: string;
}

/** The install a request names, lower-cased; anything but {"install_uuid": "<uuid>"} is refused. */
export function parseDeletionRequest(body: unknown): string {
  if (!isPlainObject(body)) throw new EventApiError('bad_json');
  const { install_uuid } = body;
  if (typeof install_uuid !== 'string' || !UUID_PATTERN.test(install_uuid)) throw new EventApiError('bad_install_uuid');
  return install_uuid.toLowerCase();
}

export const installHash = (installUuid: string): string => sha256Hex(installUuid.toLowerCase());

/**
 * `<app_id>#<install_hash>`: how a store that must not hold the install_uuid itself keys what the
 * drain has to find by install (the by_install indexes of privacy_requests and postbacks).
 */
export const installKey = (appId: string, installUuid: string): string => `${appId}#${installHash(installUuid)}`;

export function privacyRequest(input: { requestId: string; appId: string; companyId: string; installUuid: string; receivedMs: number }): {
  receipt: PrivacyReceipt;
  message: PrivacyMessage;
} {
  return {
    receipt: {
      request_id: input.requestId,
      app_id: input.appId,
      company_id: input.companyId,
      install_hash: installHash(input.installUuid),
      app_install: installKey(input.appId, input.installUuid),
      received_ms: input.receivedMs,
      state: 'queued',
    },
    message: {
      version: 1,
      request_id: input.requestId,
      app_id: input.appId,
      company_id: input.companyId,
      install_uuid: input.installUuid.toLowerCase(),
    },
  };
}
