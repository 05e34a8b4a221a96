import { hash } from 'node:crypto';

/**
 * Lowercase hex SHA-256: audit object names, device and install hashes, stored server keys.
 * crypto.hash (Node 20.12+) is the one-shot form: about a third of createHash's cost for the
 * short inputs hashed once per event on the ingest path.
 */
export const sha256Hex = (data: string | Uint8Array): string => hash('sha256', data, 'hex');
