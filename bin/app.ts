import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AttributionServiceStack } from '../lib/stack';

/**
 * The CDK app: one stack (`AttributionService`, or context `stackName`), checked by cdk-nag's
 * AWS Solutions pack. Context `alarmEmail` subscribes an address to the alarm topic.
 * Stack tests build the app through this same function.
 */
export function createApp(props: AppProps = {}): { app: App; stack: AttributionServiceStack } {
  const app = new App(props);
  const stackName: unknown = app.node.tryGetContext('stackName');
  const alarmEmail: unknown = app.node.tryGetContext('alarmEmail');
  const stack = new AttributionServiceStack(app, typeof stackName === 'string' && stackName ? stackName : 'AttributionService', {
    alarmEmail: typeof alarmEmail === 'string' && alarmEmail ? alarmEmail : undefined,
  });
  // Acknowledged findings are also written into the template's Metadata, so the reasons travel with it.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));
  return { app, stack };
}

if (require.main === module) createApp();
