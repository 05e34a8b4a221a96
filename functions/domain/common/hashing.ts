import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256: audit object names, device and install hashes, stored server keys. */
export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');
