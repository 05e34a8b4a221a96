import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { healthSources as sourcesOf } from '../functions/adapters/health-sources';
import { type Target, TargetError } from '../functions/commands/command';
import type { HealthSources } from '../functions/domain/health/operator-health';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../lib/function-environment';
import { outputKey } from '../lib/manifest';

/**
 * Where `admin health` reads, with the operator's credentials as every admin command: the
 * adapter the console API's function runs (functions/adapters/health-sources.ts), given what the
 * CLI finds itself. With --stack, the alarm topic from the stack's outputs (DescribeStacks) and
 * each dead-letter queue through its queue's RedrivePolicy; locally, the runtime's control port.
 */
export function healthSources(target: Target): HealthSources {
  const common = { baseUrl: target.baseUrl, metrics: { namespace: METRICS_NAMESPACE, service: SERVICE_NAME } };
  if (target.stack) {
    const stack = target.stack;
    return sourcesOf({ ...common, where: { kind: 'aws', alarmTopicArn: (signal) => alarmTopicArn(stack, signal) } });
  }
  const control = target.control;
  if (!control) throw new TargetError('admin health needs the local runtime or --stack NAME');
  return sourcesOf({ ...common, where: { kind: 'local', control } });
}

async function alarmTopicArn(stack: string, signal: AbortSignal): Promise<string> {
  const { Stacks } = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stack }), { abortSignal: signal });
  const arn = Stacks?.[0]?.Outputs?.find((o) => o.OutputKey === outputKey.alarmTopicArn())?.OutputValue;
  if (!arn) throw new TargetError(`stack ${stack} has no output ${outputKey.alarmTopicArn()}`);
  return arn;
}
