import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { queues } from './manifest';

/**
 * The deploy configuration of one environment: `config/<env>.json`, chosen with `-c env=<name>`
 * (`dev` by default). It lives in the repository so that every deploy of an environment uses the
 * same values: a setting given only on one command line is lost at the next deploy without it
 * (docs/deploy.md). Unknown keys are refused, so a misspelt setting fails synth instead of being
 * ignored; `$comment` is the one free-text key, since JSON has no comments.
 */

/** Lambda keeps this much of an account's concurrency unreserved; a reservation that leaves less is refused. */
export const MIN_UNRESERVED_CONCURRENCY = 100;
/** The concurrency AWS gives an account per region by default (new accounts may have less: ask for an increase). */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

const comment = z.string().optional();
const wholeNumber = (minimum: number, why = '') =>
  z.number().int('must be a whole number').min(minimum, `must be at least ${minimum}${why}`);
const dnsName = z
  .string()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a lower-case domain name such as go.example.com');

/** A custom domain of the link or API host (lib/stack.ts passes it on; the domains' docs say how it is served). */
const customDomain = z.strictObject({
  domainName: dnsName,
  certificateArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/, 'must be an ACM certificate ARN')
    .optional(),
  hostedZoneId: z
    .string()
    .regex(/^Z[A-Z0-9]{1,32}$/, 'must be a Route 53 hosted zone id (Z...)')
    .optional(),
  hostedZoneName: dnsName.optional(),
});

export const deployConfigSchema = z
  .strictObject({
    $comment: comment,
    /** `dev` may deploy without an alarm destination and without deletion protection; anything else may not go unwatched. */
    kind: z.enum(['dev', 'prod']),
    stackName: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must be a CloudFormation stack name')
      .default('AttributionService'),
    /** Pins the stack to one account and region; unset, the CLI's credentials and region decide at deploy time. */
    account: z
      .string()
      .regex(/^\d{12}$/, 'must be a 12-digit AWS account id')
      .optional(),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as eu-west-1')
      .optional(),
    alarms: z
      .strictObject({
        $comment: comment,
        /** Subscribed to the alarm topic by email (each address confirms from the mail AWS sends). */
        emails: z
          .array(z.email())
          .refine((emails) => new Set(emails).size === emails.length, 'lists an address twice')
          .default([]),
        /** An existing SNS topic (a chat or paging integration's) every alarm notifies as well, on alarm and on recovery. */
        topicArn: z
          .string()
          .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN')
          .optional(),
      })
      .default({ emails: [] }),
    /** The API stage's throttle, which POST /event has and every other route's is held under (lib/constructs/edge.ts). */
    api: z.strictObject({ rateLimit: wholeNumber(1).optional(), burstLimit: wholeNumber(1).optional() }).default({}),
    /** The exchange rates' source, an https URL of a document in the ECB's format (docs/ingestion.md "Currencies"). */
    fxSourceUrl: z.url({ protocol: /^https$/, error: 'must be an https URL' }).optional(),
    /**
     * Concurrency reserved for a function: guaranteed to it, and its ceiling. The aggregator's
     * event source mapping runs up to `maxConcurrency` invocations (lib/manifest.ts); Lambda throttles
     * the mapping if the reservation is below it, so it may not be.
     */
    reservedConcurrency: z
      .strictObject({
        aggregator: wholeNumber(
          queues.aggregation.consumer.maxConcurrency,
          ", the aggregation queue mapping's maxConcurrency (lib/manifest.ts)",
        ).optional(),
        ingest: wholeNumber(1).optional(),
      })
      .default({}),
    /** The account's concurrency limit in the region (Service Quotas), and at what share of it the account concurrency alarm fires. */
    accountConcurrency: z
      .strictObject({
        limit: wholeNumber(MIN_UNRESERVED_CONCURRENCY).default(DEFAULT_ACCOUNT_CONCURRENCY),
        alarmPercent: wholeNumber(1).max(100).default(80),
      })
      .default({ limit: DEFAULT_ACCOUNT_CONCURRENCY, alarmPercent: 80 }),
    linkDomain: customDomain.optional(),
    apiDomain: customDomain.optional(),
    /** A WAF web ACL for CloudFront: WAFv2, global scope (so in us-east-1). */
    webAclArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global\/webacl\/\S+$/, 'must be a global (us-east-1) WAFv2 web ACL ARN')
      .optional(),
    priceClass: z.enum(['PriceClass_100', 'PriceClass_200', 'PriceClass_All']).optional(),
    /** Deletion protection on the data tables; only a dev environment may turn it off. */
    deletionProtection: z.boolean().default(true),
  })
  .superRefine((config, context) => {
    const { emails, topicArn } = config.alarms;
    if (config.kind !== 'dev' && emails.length === 0 && !topicArn) {
      context.addIssue({
        code: 'custom',
        path: ['alarms'],
        message:
          `a ${config.kind} environment needs an alarm destination: set alarms.emails (addresses) or alarms.topicArn ` +
          '(an existing SNS topic), or the alarms notify nobody (docs/deploy.md)',
      });
    }
    if (config.kind !== 'dev' && !config.deletionProtection) {
      context.addIssue({
        code: 'custom',
        path: ['deletionProtection'],
        message: `only a dev environment may turn deletion protection off`,
      });
    }
    const reserved = (config.reservedConcurrency.aggregator ?? 0) + (config.reservedConcurrency.ingest ?? 0);
    if (config.accountConcurrency.limit - reserved < MIN_UNRESERVED_CONCURRENCY) {
      context.addIssue({
        code: 'custom',
        path: ['reservedConcurrency'],
        message:
          `${reserved} reserved of an account limit of ${config.accountConcurrency.limit} leaves fewer than the ` +
          `${MIN_UNRESERVED_CONCURRENCY} unreserved Lambda requires (raise accountConcurrency.limit once AWS has raised the quota)`,
      });
    }
    if (config.linkDomain && config.apiDomain && config.linkDomain.domainName === config.apiDomain.domainName) {
      context.addIssue({ code: 'custom', path: ['apiDomain', 'domainName'], message: 'must differ from linkDomain.domainName' });
    }
  });

export type DeployConfig = z.infer<typeof deployConfigSchema>;
export type CustomDomain = z.infer<typeof customDomain>;

/** A deploy configuration that cannot be used: its message says what to change, and no stack trace helps. */
export class DeployConfigError extends Error {
  override readonly name = 'DeployConfigError';
}

/** The repository's config/ directory. */
export const CONFIG_DIR = path.resolve(__dirname, '..', 'config');

/**
 * The validated configuration of environment `env` from `<dir>/<env>.json`. Every problem is
 * reported at once, each with its place in the file, and synth stops there.
 */
export function loadDeployConfig(env: string, dir: string = CONFIG_DIR): DeployConfig {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(env))
    throw new DeployConfigError(`-c env=${env}: an environment name is lower-case letters, digits and dashes`);
  const file = path.join(dir, `${env}.json`);
  if (!existsSync(file)) {
    const known = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.json')) : [];
    throw new DeployConfigError(
      `-c env=${env}: no ${file} (environments: ${known.map((name) => name.replace(/\.json$/, '')).join(', ') || 'none'})`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new DeployConfigError(`${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = deployConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(file)'}: ${issue.message}`);
    throw new DeployConfigError(`${file} is not a valid deploy configuration (docs/deploy.md):\n${problems.join('\n')}`);
  }
  return parsed.data;
}

/** The account concurrency the alarm fires above (lib/constructs/alarms.ts). */
export function accountConcurrencyThreshold(config: DeployConfig): number {
  return Math.floor((config.accountConcurrency.limit * config.accountConcurrency.alarmPercent) / 100);
}
