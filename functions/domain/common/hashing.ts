import { hash } from 'node:crypto';

/**
 * Lowercase hex SHA-256: audit object names, device and install hashes, stored server keys.
 * crypto.hash (Node 20.12+) is the one-shot form, cheaper than createHash for the short inputs
 * hashed once per event on the ingest path (measured in docs/ingestion.md, "Validation cost").
 */
export const sha256Hex = (data: string | Uint8Array): string => hash('sha256', data, 'hex');
