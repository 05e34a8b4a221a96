import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { AthenaWarehouse } from '../functions/adapters/athena-sql';
import { TargetError } from '../functions/commands/command';
import { outputKey } from '../lib/manifest';

/**
 * The stack's Athena workgroup and Glue database, from its outputs (lib/constructs/warehouse.ts),
 * for `admin sql --stack`. A stack deployed before the warehouse has neither: deploy it again.
 */
export async function stackWarehouse(stackName: string): Promise<AthenaWarehouse> {
  const { Stacks } = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stackName }));
  const outputs = new Map((Stacks?.[0]?.Outputs ?? []).map((output) => [output.OutputKey, output.OutputValue]));
  const need = (key: string): string => {
    const value = outputs.get(key);
    if (!value) throw new TargetError(`stack ${stackName} has no output ${key}: deploy this version (it adds the warehouse) and try again`);
    return value;
  };
  return { workGroup: need(outputKey.athenaWorkGroup()), database: need(outputKey.warehouseDatabase()) };
}
