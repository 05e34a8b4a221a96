import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SkanSchemaStore } from '../adapters/skan-schema-store';
import { NotFoundError } from '../adapters/tenant-store';
import { type SkanSchema, validateSkanSchema } from '../domain/skan/schema';
import { resourceName } from '../shared/config';
import { appByKey } from './apps';
import { defineCommand, UsageError } from './command';
import { intFlag, key } from './flags';
import { skanNetworkCommands } from './skan-network-commands';

/** A schema file `skan schema set` refuses, with the field at fault named first (`fine[3].revenue_usd: ...`). */
export class SkanSchemaFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SkanSchemaFileError';
  }
}

const store = () => new SkanSchemaStore(resourceName.table('tenants'));

/** The schema file's text, checked by the same rule the SDK endpoint's schemas passed (docs/ios.md section 1). */
export function parseSkanSchemaFile(text: string): SkanSchema {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SkanSchemaFileError(`the schema file is not JSON: ${(error as Error).message}`);
  }
  const result = validateSkanSchema(json);
  if (!result.ok) throw new SkanSchemaFileError(`${result.field}: ${result.message}`);
  return result.schema;
}

/** Conversion-value schemas (docs/ios.md section 1): what the SKAN report and the SDK read. */
export const skanCommands = [
  defineCommand({
    name: 'skan schema set',
    usage:
      "skan schema set --app-key K --file schema.json   (the app's conversion-value schema, as docs/ios.md section 1\n" +
      '            describes it: {"fine": [...], "coarse": [...], "lock": [...]}; stored as a new version, made active)\n' +
      '            [--json TEXT]   (the schema itself instead of a file: the console)',
    flags: z
      .object({ 'app-key': key, file: z.string().min(1).optional(), json: z.string().min(1).optional() })
      .refine((f) => (f.file === undefined) !== (f.json === undefined), {
        message: 'give exactly one of --file and --json',
        path: ['file'],
      }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const schema = parseSkanSchemaFile(f.json ?? readFile(f.file ?? ''));
      const version = await store().put(app.app_id, schema);
      return { app_id: app.app_id, version, schema };
    },
  }),
  defineCommand({
    name: 'skan schema show',
    usage: "skan schema show --app-key K [--version N]   (the app's active conversion-value schema, or version N)",
    flags: z.object({ 'app-key': key, version: intFlag.optional() }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const found = f.version === undefined ? await store().active(app.app_id) : await store().version(app.app_id, f.version);
      if (found === undefined) {
        if (f.version !== undefined) throw new NotFoundError(`schema version ${f.version}`);
        return { app_id: app.app_id, version: null, schema: null };
      }
      return { app_id: app.app_id, version: found.version, updated_ms: found.updated_ms, schema: found.schema };
    },
  }),
  // Ad network ids to partners (docs/ios.md section 2): functions/commands/skan-network-commands.ts.
  ...skanNetworkCommands,
];

function readFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--file cannot be read: ${(error as Error).message}`, 'skan schema set');
  }
}
