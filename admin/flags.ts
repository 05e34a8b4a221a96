import { z } from 'zod';
import { UUID_PATTERN } from '../functions/domain/common/uuid';

/** Flag schemas more than one command reads. */
export const url = z.url({ protocol: /^https?$/ });
export const name = z.string().trim().min(1).max(200);
export const key = z.string().min(1);
export const countries = z
  .string()
  .transform((s) => s.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^[A-Z]{2}$/, 'country codes are two letters (ISO 3166-1 alpha-2)')).min(1));
export const intFlag = z.coerce.number().int().positive();
/** Stored lower-case, as the audit record keeps it. */
export const installUuid = z.string().regex(UUID_PATTERN, 'not a UUID').transform((uuid) => uuid.toLowerCase());
