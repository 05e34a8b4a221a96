import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CertificateStack, CLOUDFRONT_CERTIFICATE_REGION } from '../lib/certificate-stack';
import { accountConcurrencyThreshold, CONFIG_DIR, type DeployConfig, DeployConfigError, loadDeployConfig } from '../lib/config';
import { AttributionServiceStack, type AttributionServiceStackProps } from '../lib/stack';

/**
 * Context values that used to configure a deploy. They are refused rather than read: a value
 * given on one command line was silently dropped by the next deploy without it (issue 34).
 */
const MOVED_TO_CONFIG: Readonly<Record<string, string>> = {
  alarmEmail: 'alarms.emails',
  apiRateLimit: 'api.rateLimit',
  apiBurstLimit: 'api.burstLimit',
  fxSourceUrl: 'fxSourceUrl',
  stackName: 'stackName',
};

/**
 * The CDK app: the service's stack (and, for custom domains outside us-east-1, the stack of their
 * certificate there: certificateStackOf), configured by `config/<env>.json` (`-c env=<name>`, `dev` by default;
 * lib/config.ts, docs/deploy.md), checked by cdk-nag's AWS Solutions pack. Context `configDir`
 * reads the files from another directory (tests). Context `originSecretVersion` makes CloudFront
 * send that version of the origin secret: the last step of a rotation (docs/secrets.md), a
 * one-off that a later deploy without it leaves harmless (CloudFront then sends the current
 * version, which is the same value), so it is a flag and not a setting. Stack tests build the
 * app through this same function.
 */
export function createApp(props: AppProps = {}): {
  app: App;
  stack: AttributionServiceStack;
  config: DeployConfig;
  certificateStack?: CertificateStack;
} {
  const app = new App(props);
  for (const [name, setting] of Object.entries(MOVED_TO_CONFIG)) {
    if (app.node.tryGetContext(name) !== undefined)
      throw new DeployConfigError(`context ${name} is no longer read: set ${setting} in config/<env>.json instead (docs/deploy.md)`);
  }
  const env = stringContext(app, 'env') ?? 'dev';
  const config = loadDeployConfig(env, stringContext(app, 'configDir') ?? CONFIG_DIR);
  const certificateStack = certificateStackOf(app, config);
  const stack = new AttributionServiceStack(app, config.stackName, {
    ...stackPropsOf(config),
    originSecretVersion: secretVersionContext(app, 'originSecretVersion'),
    ...(certificateStack && { certificate: certificateStack.certificate, crossRegionReferences: true }),
  });
  // Acknowledged findings are also written into the template's Metadata, so the reasons travel with it.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));
  return { app, stack, config, certificateStack };
}

/**
 * The us-east-1 stack that makes the custom domains' certificate, when the service stack is in
 * another region and every domain gives its hosted zone but none a certificateArn
 * (lib/certificate-stack.ts, docs/domains.md). A us-east-1 service stack makes it itself.
 */
function certificateStackOf(app: App, config: DeployConfig): CertificateStack | undefined {
  const domains = [config.linkDomain, config.apiDomain].filter((domain) => domain !== undefined);
  const zoned = domains.length > 0 && domains.every((domain) => domain.hostedZoneId && domain.hostedZoneName && !domain.certificateArn);
  if (!zoned || config.region === CLOUDFRONT_CERTIFICATE_REGION) return undefined;
  if (!config.region) {
    throw new DeployConfigError(
      `${domains.map((domain) => domain.domainName).join(' and ')}: the certificate is made in a us-east-1 stack, whose output ` +
        "the service stack reads across regions; set region in config/<env>.json (CDK needs the service stack's region at " +
        'synth for that), or give a certificateArn (docs/domains.md)',
    );
  }
  return new CertificateStack(app, `${config.stackName}-Certificate`, {
    env: { account: config.account, region: CLOUDFRONT_CERTIFICATE_REGION },
    domains,
  });
}

/** What the stack takes from the deploy configuration. */
export function stackPropsOf(config: DeployConfig): AttributionServiceStackProps {
  return {
    env: config.account || config.region ? { account: config.account, region: config.region } : undefined,
    alarmDestination: { emails: config.alarms.emails, topicArn: config.alarms.topicArn },
    accountConcurrencyAlarm: accountConcurrencyThreshold(config),
    apiThrottle: config.api,
    internet: config.fxSourceUrl ? { FX_SOURCE_URL: config.fxSourceUrl } : undefined,
    reservedConcurrency: config.reservedConcurrency,
    linkDomain: config.linkDomain,
    apiDomain: config.apiDomain,
    webAclArn: config.webAclArn,
    priceClass: config.priceClass,
    deletionProtection: config.deletionProtection,
  };
}

function stringContext(app: App, name: string): string | undefined {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw new Error(`context ${name} must be a string, got ${String(raw)}`);
  return raw;
}

/** A Secrets Manager VersionId (`put-secret-value` prints it: a UUID), or undefined when unset. */
function secretVersionContext(app: App, name: string): string | undefined {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^[A-Za-z0-9-]{32,64}$/.test(raw))
    throw new Error(`context ${name} must be a secret's VersionId, got ${String(raw)}`);
  return raw;
}

if (require.main === module) {
  try {
    createApp();
  } catch (error) {
    // A configuration to fix is said in a few lines; anything else keeps its stack trace.
    if (!(error instanceof DeployConfigError)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  }
}
