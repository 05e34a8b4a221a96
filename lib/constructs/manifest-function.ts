import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { envName, type FunctionSpec, type QueueName, type ScheduleSpec, schedules, type TableAccess, type TableName } from '../manifest';
import { type AlarmTopic, functionAlarms } from './alarms';
import type { DataStores } from './data-stores';
import { entriesOf } from './naming';
import { type QueueAccess, ServiceFunction } from './service-function';

/** Manifest entries are relative to the repository root. */
const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

export interface ManifestFunctionProps {
  /** The function's name in the manifest. */
  readonly name: string;
  readonly spec: FunctionSpec;
  readonly stores: DataStores;
  readonly alarms: AlarmTopic;
  readonly environment?: Record<string, string>;
}

/**
 * One function of the manifest with everything the manifest says about it: the handler, its
 * grants and environment, and its alarms (functionAlarms: error rate, duration near timeout, throttles). Routed functions are
 * Endpoints, which add the HTTP routes; queue consumers and scheduled functions are this alone.
 */
export class ManifestFunction extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: ManifestFunctionProps) {
    super(scope, id);
    const { name, spec, stores, alarms } = props;

    this.function = new ServiceFunction(this, 'Function', {
      entry: path.join(PROJECT_ROOT, spec.entry),
      description: spec.description,
      timeout: spec.timeoutSeconds === undefined ? undefined : Duration.seconds(spec.timeoutSeconds),
      memorySize: spec.memoryMb,
      // The internet addresses the manifest gives the function (local/function-context.ts gives '' instead).
      environment: { ...spec.internet, ...props.environment },
    });
    for (const [table, access] of entriesOf<TableName, TableAccess>(spec.tables)) {
      this.function.bindTable(table, stores.tables[table], access);
    }
    if (spec.bucket) this.function.bindBucket(stores.bucket, spec.bucket);
    if (spec.exports) this.function.bindBucket(stores.exportBucket, spec.exports, envName.exportBucket());
    for (const [queue, access] of entriesOf<QueueName, QueueAccess>(spec.queues)) {
      this.function.bindQueue(queue, stores.queues[queue], access);
    }
    if (spec.secretPrefix !== undefined) this.function.bindSecretPrefix(spec.secretPrefix);
    if (spec.healthView) this.function.bindHealthView(stores.deadLetterQueues, alarms.topic);

    // A function a schedule runs (lib/manifest.ts, schedules) is judged per hour; one fed by routes,
    // a queue or API Gateway's authorizer (invoked per request) per minute.
    const scheduled = Object.values(schedules as Record<string, ScheduleSpec>).some((schedule) => schedule.function === name);
    functionAlarms(this, alarms, name, this.function, scheduled);
  }
}
