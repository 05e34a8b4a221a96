import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountConcurrencyThreshold, type DeployConfig, DeployConfigError, loadDeployConfig } from '../../../lib/config';
import { queues } from '../../../lib/manifest';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'deploy-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `<dir>/<env>.json` and loads it as `-c env=<env>` would. */
function load(config: unknown, env = 'staging'): DeployConfig {
  writeFileSync(join(dir, `${env}.json`), JSON.stringify(config));
  return loadDeployConfig(env, dir);
}

const prod = { kind: 'prod', alarms: { emails: ['oncall@example.com'] } };

describe('the shipped configurations', () => {
  it('deploy dev without an alarm destination, deletion protection off and nothing reserved', () => {
    const dev = loadDeployConfig('dev');
    expect(dev).toMatchObject({ kind: 'dev', stackName: 'AttributionService', deletionProtection: false, reservedConcurrency: {} });
    expect(dev.alarms).toEqual({ emails: [] });
  });

  it('refuse prod until someone fills in an alarm destination', () => {
    expect(() => loadDeployConfig('prod')).toThrow(/prod\.json[\s\S]*alarms: a prod environment needs an alarm destination/);
    // bin/app.ts prints this kind of error as its message alone, without a stack trace.
    expect(() => loadDeployConfig('prod')).toThrow(DeployConfigError);
  });
});

describe('a deploy configuration', () => {
  it('outside dev, takes an email or an existing SNS topic as the alarm destination', () => {
    expect(load(prod).alarms.emails).toEqual(['oncall@example.com']);
    const topicArn = 'arn:aws:sns:eu-west-1:123456789012:pager-duty';
    expect(load({ kind: 'prod', alarms: { topicArn } }).alarms).toEqual({ emails: [], topicArn });
    expect(() => load({ kind: 'prod', alarms: { emails: [] } })).toThrow(/needs an alarm destination/);
    expect(() => load({ kind: 'prod' })).toThrow(/needs an alarm destination/);
  });

  it('fills the defaults: the stack name, deletion protection, 80% of a 1,000 account limit', () => {
    const config = load(prod);
    expect(config).toMatchObject({ stackName: 'AttributionService', deletionProtection: true, api: {} });
    expect(accountConcurrencyThreshold(config)).toBe(800);
    expect(accountConcurrencyThreshold(load({ ...prod, accountConcurrency: { limit: 3000, alarmPercent: 90 } }))).toBe(2700);
  });

  it('refuses a misspelt key rather than ignoring it, and names its place in the file', () => {
    expect(() => load({ ...prod, alarmEmail: 'x@example.com' })).toThrow(/\(file\): Unrecognized key: "alarmEmail"/);
    expect(() => load({ ...prod, alarms: { emails: ['oncall@example.com'], email: 'x' } })).toThrow(/alarms: Unrecognized key/);
  });

  it('refuses malformed values, each with what it should be', () => {
    const problems = (config: unknown) => {
      try {
        load(config);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('loaded');
    };
    expect(problems({ ...prod, alarms: { emails: ['not-an-address'] } })).toMatch(/alarms\.emails\.0:/);
    expect(problems({ ...prod, alarms: { topicArn: 'arn:aws:sqs:eu-west-1:123456789012:q' } })).toMatch(
      /alarms\.topicArn: must be an SNS topic ARN/,
    );
    expect(problems({ ...prod, fxSourceUrl: 'http://rates.example.com/' })).toMatch(/fxSourceUrl: must be an https URL/);
    expect(problems({ ...prod, api: { rateLimit: 0 } })).toMatch(/api\.rateLimit: must be at least 1/);
    expect(problems({ ...prod, api: { burstLimit: 2.5 } })).toMatch(/api\.burstLimit: must be a whole number/);
    expect(problems({ ...prod, linkDomain: { domainName: 'Go.Example.com' } })).toMatch(/linkDomain\.domainName: must be a lower-case/);
    expect(problems({ ...prod, linkDomain: { domainName: 'go.example.com', certificateArn: 'arn:aws:iam::1:x' } })).toMatch(
      /linkDomain\.certificateArn: must be an ACM certificate ARN/,
    );
    expect(problems({ ...prod, webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/a/b' })).toMatch(
      /webAclArn: must be a global/,
    );
    expect(problems({ ...prod, priceClass: 'PriceClass_Cheapest' })).toMatch(/priceClass:/);
    expect(problems({ kind: 'staging', alarms: prod.alarms })).toMatch(/kind:/);
    // Every problem at once, not the first alone.
    expect(problems({ kind: 'prod', fxSourceUrl: 'ftp://x', api: { rateLimit: -1 } }).split('\n')).toHaveLength(4);
  });

  it('accepts the domains, web ACL and price class the edge takes', () => {
    const domains = {
      linkDomain: {
        domainName: 'go.example.com',
        certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
      },
      apiDomain: { domainName: 'api.example.com', hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' },
      webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/attribution/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
      priceClass: 'PriceClass_100',
    };
    expect(load({ ...prod, ...domains })).toMatchObject(domains);
    expect(() => load({ ...prod, ...domains, apiDomain: { domainName: 'go.example.com' } })).toThrow(
      /apiDomain\.domainName: must differ from linkDomain\.domainName/,
    );
  });

  it("reserves the aggregator at least its queue mapping's maximum concurrency, and leaves the account 100 unreserved", () => {
    const maximum = queues.aggregation.consumer.maxConcurrency;
    expect(load({ ...prod, reservedConcurrency: { aggregator: maximum, ingest: 1 } }).reservedConcurrency).toEqual({
      aggregator: maximum,
      ingest: 1,
    });
    expect(() => load({ ...prod, reservedConcurrency: { aggregator: maximum - 1 } })).toThrow(
      new RegExp(`reservedConcurrency\\.aggregator: must be at least ${maximum}, the aggregation queue mapping's maxConcurrency`),
    );
    expect(() => load({ ...prod, reservedConcurrency: { aggregator: 500, ingest: 401 } })).toThrow(
      /reservedConcurrency: 901 reserved of an account limit of 1000 leaves fewer than the 100 unreserved/,
    );
    expect(load({ ...prod, reservedConcurrency: { aggregator: 500, ingest: 400 } }).reservedConcurrency.ingest).toBe(400);
    expect(() => load({ ...prod, accountConcurrency: { limit: 50 } })).toThrow(/accountConcurrency\.limit: must be at least 100/);
  });

  it('lets only a dev environment turn deletion protection off', () => {
    expect(load({ kind: 'dev', deletionProtection: false }).deletionProtection).toBe(false);
    expect(() => load({ ...prod, deletionProtection: false })).toThrow(/deletionProtection: only a dev environment/);
  });

  it('names the environments there are when the one asked for has no file, and refuses a name that is a path', () => {
    load(prod, 'known');
    expect(() => loadDeployConfig('unknown', dir)).toThrow(/-c env=unknown: no .*unknown\.json \(environments: .*known/);
    expect(() => loadDeployConfig('../config/dev', dir)).toThrow(/an environment name is lower-case letters, digits and dashes/);
    writeFileSync(join(dir, 'broken.json'), '{ "kind": "dev", }');
    expect(() => loadDeployConfig('broken', dir)).toThrow(/broken\.json is not JSON/);
  });
});
