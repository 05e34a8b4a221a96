/**
 * The stateful resources of a template, reduced to what an upgrade must not change: their logical
 * ids (CloudFormation replaces, so empties or orphans, a resource whose id changes), their types,
 * their deletion policies, and for tables the key schema and the indexes with their keys (a
 * changed key replaces the table). test/stack/stateful-resources.json is the checked-in copy;
 * docs/operations.md ("Upgrading") says how to change it deliberately.
 */

/** Resource types that hold data or guard it; anything of these types is pinned. */
export const STATEFUL_TYPES = [
  'AWS::DynamoDB::Table',
  'AWS::S3::Bucket',
  'AWS::SQS::Queue',
  'AWS::KMS::Key',
  'AWS::Glue::Database',
  'AWS::Glue::Table',
  'AWS::SecretsManager::Secret',
  // The console's users (lib/constructs/console-site.ts): a replaced pool loses every account.
  'AWS::Cognito::UserPool',
] as const;

/** "name:S", a key attribute and its type, as the snapshot writes it. */
type Key = string;

export interface StatefulResource {
  readonly type: string;
  /** Retain or Delete, as the template says (Delete when it says nothing). */
  readonly deletionPolicy: string;
  /** Tables: the partition and optional sort key. */
  readonly keys?: readonly Key[];
  /** Tables: each global secondary index's keys, by index name. */
  readonly indexes?: Readonly<Record<string, readonly Key[]>>;
  /** Glue: the database or table name the SQL uses. */
  readonly name?: string;
}

export type StatefulSnapshot = Readonly<Record<string, StatefulResource>>;

interface TemplateResource {
  readonly Type: string;
  readonly DeletionPolicy?: string;
  readonly Properties?: Record<string, any>;
}

/** The stateful resources of a synthesized template, by logical id, in id order. */
export function statefulResources(resources: Readonly<Record<string, TemplateResource>>): StatefulSnapshot {
  const pinned: Record<string, StatefulResource> = {};
  for (const id of Object.keys(resources).sort()) {
    const resource = resources[id];
    if (!(STATEFUL_TYPES as readonly string[]).includes(resource.Type)) continue;
    const properties = resource.Properties ?? {};
    const entry: StatefulResource = { type: resource.Type, deletionPolicy: resource.DeletionPolicy ?? 'Delete' };
    if (resource.Type === 'AWS::DynamoDB::Table') {
      const types = new Map<string, string>(
        (properties.AttributeDefinitions ?? []).map((a: { AttributeName: string; AttributeType: string }) => [
          a.AttributeName,
          a.AttributeType,
        ]),
      );
      const keysOf = (schema: { AttributeName: string }[]) =>
        schema.map(({ AttributeName }) => `${AttributeName}:${types.get(AttributeName)}`);
      const indexes = (properties.GlobalSecondaryIndexes ?? []) as { IndexName: string; KeySchema: { AttributeName: string }[] }[];
      pinned[id] = {
        ...entry,
        keys: keysOf(properties.KeySchema ?? []),
        indexes: Object.fromEntries(indexes.map((index) => [index.IndexName, keysOf(index.KeySchema)])),
      };
    } else if (resource.Type === 'AWS::Glue::Database') {
      pinned[id] = { ...entry, name: properties.DatabaseInput?.Name };
    } else if (resource.Type === 'AWS::Glue::Table') {
      pinned[id] = { ...entry, name: properties.TableInput?.Name };
    } else {
      pinned[id] = entry;
    }
  }
  return pinned;
}

/**
 * What an upgrade from `pinned` to `current` would do that it must not: a stateful resource
 * removed or renamed, its type, deletion policy, name or keys changed, an index removed or its
 * keys changed, more than one index added to a table in one change (CloudFormation adds one
 * global secondary index per table per update), or a stateful resource the snapshot does not
 * know yet (unless `allowNew`, when the snapshot is being updated). Empty when the upgrade is safe.
 */
export function unsafeChanges(pinned: StatefulSnapshot, current: StatefulSnapshot, options: { allowNew?: boolean } = {}): string[] {
  const problems: string[] = [];
  for (const [id, before] of Object.entries(pinned)) {
    const after = current[id];
    if (!after) {
      problems.push(`${id} (${before.type}) is gone: a removed or renamed construct deletes or orphans its data`);
      continue;
    }
    for (const field of ['type', 'deletionPolicy', 'name'] as const) {
      if (before[field] !== after[field]) problems.push(`${id}: ${field} changed from ${before[field]} to ${after[field]}`);
    }
    if (String(before.keys) !== String(after.keys)) {
      problems.push(`${id}: key schema changed from [${before.keys}] to [${after.keys}], which replaces the table`);
    }
    const beforeIndexes = before.indexes ?? {};
    const afterIndexes = after.indexes ?? {};
    for (const [name, keys] of Object.entries(beforeIndexes)) {
      if (!(name in afterIndexes)) problems.push(`${id}: index ${name} is gone`);
      else if (String(keys) !== String(afterIndexes[name])) {
        problems.push(`${id}: index ${name} keys changed from [${keys}] to [${afterIndexes[name]}]`);
      }
    }
    const added = Object.keys(afterIndexes).filter((name) => !(name in beforeIndexes));
    if (added.length > 1) {
      problems.push(`${id}: ${added.length} indexes added (${added.join(', ')}); CloudFormation adds one per table per update`);
    }
  }
  for (const [id, after] of Object.entries(current)) {
    if (!(id in pinned) && !options.allowNew)
      problems.push(`${id} (${after.type}) is new: add it to the snapshot (UPDATE_STATEFUL_SNAPSHOT=1)`);
  }
  return problems;
}

/**
 * The snapshot after a deliberate update: the pinned entries as they were, where the current
 * ones are new (resources and indexes). Nothing pinned is removed or changed this way: that is
 * a hand edit of the JSON, with its migration step in CHANGELOG.md.
 */
export function withAdditions(pinned: StatefulSnapshot, current: StatefulSnapshot): StatefulSnapshot {
  const updated: Record<string, StatefulResource> = {};
  for (const id of [...new Set([...Object.keys(pinned), ...Object.keys(current)])].sort()) {
    const before = pinned[id];
    const after = current[id];
    if (!before) updated[id] = after as StatefulResource;
    else if (after?.indexes && before.indexes) updated[id] = { ...before, indexes: { ...after.indexes, ...before.indexes } };
    else updated[id] = before;
  }
  return updated;
}
