import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AttributionServiceStack } from '../lib/stack';

/**
 * The CDK app: one stack (`AttributionService`, or context `stackName`), checked by cdk-nag's
 * AWS Solutions pack. Context `alarmEmail` subscribes an address to the alarm topic; `apiRateLimit`
 * and `apiBurstLimit` replace the API stage's throttling defaults (lib/constructs/edge.ts);
 * `originSecretVersion` makes CloudFront send that version of the origin secret, the last step of
 * a rotation (docs/secrets.md); `fxSourceUrl` replaces the exchange rates' source, the European
 * Central Bank's daily reference rates (an https URL of a document in the ECB's format,
 * docs/ingestion.md "Currencies"). Stack tests build the app through this same function.
 */
export function createApp(props: AppProps = {}): { app: App; stack: AttributionServiceStack } {
  const app = new App(props);
  const stackName: unknown = app.node.tryGetContext('stackName');
  const alarmEmail: unknown = app.node.tryGetContext('alarmEmail');
  const stack = new AttributionServiceStack(app, typeof stackName === 'string' && stackName ? stackName : 'AttributionService', {
    alarmEmail: typeof alarmEmail === 'string' && alarmEmail ? alarmEmail : undefined,
    apiThrottle: {
      rateLimit: positiveContext(app, 'apiRateLimit'),
      burstLimit: positiveContext(app, 'apiBurstLimit'),
    },
    originSecretVersion: secretVersionContext(app, 'originSecretVersion'),
    internet: httpsContext(app, 'fxSourceUrl', 'FX_SOURCE_URL'),
  });
  // Acknowledged findings are also written into the template's Metadata, so the reasons travel with it.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));
  return { app, stack };
}

/** A positive whole-number context value (`-c name=500` arrives as a string), or undefined when unset. */
function positiveContext(app: App, name: string): number | undefined {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`context ${name} must be a positive whole number, got ${String(raw)}`);
  return value;
}

/** A Secrets Manager VersionId (`put-secret-value` prints it: a UUID), or undefined when unset. */
function secretVersionContext(app: App, name: string): string | undefined {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[A-Za-z0-9-]{32,64}$/.test(raw))
    throw new Error(`context ${name} must be a secret's VersionId, got ${String(raw)}`);
  return raw;
}

/** An https URL context value as the variable it sets (`{FX_SOURCE_URL: url}`), or nothing when unset. */
function httpsContext(app: App, name: string, variable: string): Record<string, string> {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined || raw === '') return {};
  if (typeof raw !== 'string' || !URL.canParse(raw) || new URL(raw).protocol !== 'https:')
    throw new Error(`context ${name} must be an https URL, got ${String(raw)}`);
  return { [variable]: raw };
}

if (require.main === module) createApp();
