/**
 * Whether an AWS SDK call failed with an error of one of these names. The name, not the class: a
 * mocked client, an emulator or a second copy of the SDK throws errors of the same name that are
 * not instances of the class a caller imported.
 */
export function hasErrorName(error: unknown, ...names: readonly string[]): boolean {
  const name = (error as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' && names.includes(name);
}

/** A DynamoDB write refused by its condition expression. */
export const isConditionFailure = (error: unknown): boolean => hasErrorName(error, 'ConditionalCheckFailedException');
