import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CustomDomain } from '../../lib/constructs/edge';
import { envName, type FunctionSpec, functions, originVerifyHeader, outputKey } from '../../lib/manifest';
import { AttributionServiceStack, type AttributionServiceStackProps } from '../../lib/stack';
import { type StatefulSnapshot, statefulResources, unsafeChanges, withAdditions } from './stateful-snapshot';
import {
  cdkJsonContext,
  logicalId,
  type SynthesizedService,
  serviceApp,
  serviceTemplateWith,
  synthesizeService,
  synthesizeServiceWith,
} from './synthesize';

/**
 * Deploying, upgrading and tearing down (docs/domains.md, docs/operations.md): the stateful
 * resources pinned against a checked-in snapshot, deletion protection, the Glue database removed
 * with the stack, and the optional domains, certificate, web ACL and price class.
 */
type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; Metadata?: Record<string, any> };

const SNAPSHOT = join(__dirname, 'stateful-resources.json');
const ACCOUNT = '123456789012';
const CERTIFICATE_ARN = `arn:aws:acm:us-east-1:${ACCOUNT}:certificate/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d`;
const WEB_ACL_ARN = `arn:aws:wafv2:us-east-1:${ACCOUNT}:global/webacl/attribution/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d`;
const ZONE = { hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };

const resourcesOf = (service: SynthesizedService) => service.template.toJSON().Resources as Record<string, Resource>;
const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const acknowledged = (resource: Resource) =>
  ((resource.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string }[]).map(({ id }) => id);
const nagViolations = (service: SynthesizedService) =>
  service.validationReport.pluginReports.filter((r) => r.pluginName === 'AwsSolutions').flatMap((r) => r.violations ?? []);
const nagViolationsIn = (assemblyDirectory: string) =>
  nagViolations({
    validationReport: JSON.parse(readFileSync(join(assemblyDirectory, 'validation-report.json'), 'utf8')),
  } as SynthesizedService);

describe('the stateful-resource comparison', () => {
  const table = (indexes: Record<string, string[]>, keys = ['pk:S', 'sk:S']) => ({
    type: 'AWS::DynamoDB::Table',
    deletionPolicy: 'Retain',
    keys,
    indexes,
  });
  const pinned: StatefulSnapshot = {
    LinksTable: table({ byApp: ['app_id:S'] }),
    Queue: { type: 'AWS::SQS::Queue', deletionPolicy: 'Delete' },
  };

  it('accepts the same resources, and one new index on a table', () => {
    expect(unsafeChanges(pinned, pinned)).toEqual([]);
    expect(unsafeChanges(pinned, { ...pinned, LinksTable: table({ byApp: ['app_id:S'], byPartner: ['partner:S'] }) })).toEqual([]);
  });

  it('refuses a renamed resource, a changed key, a changed or removed index, two new indexes and a new retention', () => {
    const { Queue, ...withoutQueue } = pinned;
    expect(unsafeChanges(pinned, { ...withoutQueue, RenamedQueue: Queue })).toEqual([
      'Queue (AWS::SQS::Queue) is gone: a removed or renamed construct deletes or orphans its data',
      'RenamedQueue (AWS::SQS::Queue) is new: add it to the snapshot (UPDATE_STATEFUL_SNAPSHOT=1)',
    ]);
    expect(unsafeChanges(pinned, { ...pinned, LinksTable: table({ byApp: ['app_id:S'] }, ['pk:S']) })).toHaveLength(1);
    expect(unsafeChanges(pinned, { ...pinned, LinksTable: table({ byApp: ['app_id:N'] }) })).toEqual([
      'LinksTable: index byApp keys changed from [app_id:S] to [app_id:N]',
    ]);
    expect(unsafeChanges(pinned, { ...pinned, LinksTable: table({}) })).toEqual(['LinksTable: index byApp is gone']);
    expect(unsafeChanges(pinned, { ...pinned, LinksTable: table({ byApp: ['app_id:S'], a: ['a:S'], b: ['b:S'] }) })).toEqual([
      'LinksTable: 2 indexes added (a, b); CloudFormation adds one per table per update',
    ]);
    expect(unsafeChanges(pinned, { ...pinned, Queue: { ...Queue, deletionPolicy: 'Retain' } })).toHaveLength(1);
  });

  it('updates the snapshot with additions only: a removed resource stays pinned', () => {
    const current = {
      LinksTable: table({ byApp: ['app_id:S'], byPartner: ['partner:S'] }),
      NewBucket: { type: 'AWS::S3::Bucket', deletionPolicy: 'Retain' },
    };
    expect(withAdditions(pinned, current)).toEqual({ ...current, Queue: pinned.Queue });
  });
});

describe('the default stack', () => {
  let service: SynthesizedService;
  let resources: Record<string, Resource>;
  beforeAll(() => {
    service = synthesizeService();
    resources = resourcesOf(service);
  });

  it('keeps the logical ids, deletion policies and key schemas of every stateful resource in stateful-resources.json', () => {
    const current = statefulResources(resources);
    const pinned = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as StatefulSnapshot;
    // A deliberate update adds what is new; whatever else is unsafe still fails, and is not written.
    const update = process.env.UPDATE_STATEFUL_SNAPSHOT === '1';
    expect(unsafeChanges(pinned, current, { allowNew: update })).toEqual([]);
    if (update) writeFileSync(SNAPSHOT, `${JSON.stringify(withAdditions(pinned, current), null, 2)}\n`);
    expect(Object.keys(current).length).toBeGreaterThan(20);
  });

  it('keeps every data table when the stack is deleted, with deletion protection as config/dev.json sets it (off)', () => {
    const tables = ofType(resources, 'AWS::DynamoDB::Table');
    expect(tables.length).toBeGreaterThan(0);
    for (const [id, table] of tables) {
      expect([id, table.DeletionPolicy, table.Properties.DeletionProtectionEnabled]).toEqual([id, 'Retain', false]);
    }
  });

  it('deletes the Glue database and its tables with the stack, so the same stack name deploys again', () => {
    const [[, database]] = ofType(resources, 'AWS::Glue::Database');
    expect(database.DeletionPolicy).toBe('Delete');
    expect(database.Properties.DatabaseInput.Name).toBe('attribution_service_raw');
    for (const [, table] of ofType(resources, 'AWS::Glue::Table')) expect(table.DeletionPolicy ?? 'Delete').toBe('Delete');
  });

  it('serves on the CloudFront name only, acknowledging CFR2 and CFR4 with the option that would change them', () => {
    const distribution = resources[logicalId(service.stack.edge.distribution)];
    const config = distribution.Properties.DistributionConfig;
    for (const key of ['Aliases', 'ViewerCertificate', 'WebACLId', 'PriceClass']) expect([key, config[key]]).toEqual([key, undefined]);
    const reasons = Object.fromEntries(
      ((distribution.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[]).map(({ id, reason }) => [id, reason]),
    );
    expect(reasons['AwsSolutions-CFR4']).toContain('linkDomain or apiDomain');
    expect(reasons['AwsSolutions-CFR2']).toContain('webAclArn');
    expect(ofType(resources, 'AWS::Route53::RecordSet')).toEqual([]);
    expect(ofType(resources, 'AWS::CertificateManager::Certificate')).toEqual([]);
    expect(service.template.toJSON().Outputs[outputKey.baseUrl()].Value).toEqual({
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [logicalId(service.stack.edge.distribution), 'DomainName'] }]],
    });
  });

  it('authorizes every route with the origin authorizer on x-origin-verify, whose answers API Gateway keeps per value', () => {
    // Two authorizers on purpose: the service API's origin authorizer, and the console API's JWT
    // authorizer on its own HTTP API (ADR 0007; test/stack/console-site.test.ts checks that one).
    const consoleApi = logicalId(service.stack.console.httpApi);
    const ofConsole = ([, resource]: [string, { Properties: { ApiId?: unknown } }]) =>
      JSON.stringify(resource.Properties.ApiId) === JSON.stringify({ Ref: consoleApi });
    const allAuthorizers = ofType(resources, 'AWS::ApiGatewayV2::Authorizer');
    expect(allAuthorizers.filter(ofConsole).map(([, a]) => a.Properties.AuthorizerType)).toEqual(['JWT']);
    const authorizers = allAuthorizers.filter((entry) => !ofConsole(entry));
    expect(authorizers).toHaveLength(1);
    const [[authorizerId, authorizer]] = authorizers;
    const spec = functions['origin-authorizer'];
    expect(authorizer.Properties).toMatchObject({
      AuthorizerType: 'REQUEST',
      IdentitySource: [`$request.header.${originVerifyHeader}`],
      AuthorizerResultTtlInSeconds: spec.authorizer.cacheSeconds,
      EnableSimpleResponses: true,
      AuthorizerPayloadFormatVersion: '2.0',
    });
    const authorizerFunction = logicalId(service.stack.functions.get('origin-authorizer')!);
    expect(JSON.stringify(authorizer.Properties.AuthorizerUri)).toContain(authorizerFunction);
    const routes = ofType(resources, 'AWS::ApiGatewayV2::Route').filter((entry) => !ofConsole(entry));
    // A function URL's routes are CloudFront's, not the API's (GET /l/{link_id}, issue 41).
    const routeKeys = Object.values(functions).flatMap((f: FunctionSpec) => (f.functionUrl ? [] : (f.routes ?? [])));
    expect(routes.map(([, route]) => route.Properties.RouteKey).sort()).toEqual([...routeKeys].sort());
    for (const [, route] of routes) {
      expect([route.Properties.RouteKey, route.Properties.AuthorizationType, route.Properties.AuthorizerId]).toEqual([
        route.Properties.RouteKey,
        'CUSTOM',
        { Ref: authorizerId },
      ]);
    }
    // The authorizer reads the origin secret, and API Gateway alone may invoke it.
    expect(resources[authorizerFunction].Properties.Environment.Variables[envName.originVerifySecretArn()]).toEqual({
      Ref: logicalId(service.stack.edge.originSecret),
    });
    const invokers = ofType(resources, 'AWS::Lambda::Permission').filter(
      ([, permission]) =>
        JSON.stringify(permission.Properties.FunctionName) === JSON.stringify({ 'Fn::GetAtt': [authorizerFunction, 'Arn'] }),
    );
    expect(invokers.map(([, permission]) => permission.Properties.Principal)).toEqual(['apigateway.amazonaws.com']);
  });

  describe('with a link domain, an API domain, a web ACL and a price class', () => {
    let branded: SynthesizedService;
    let brandedResources: Record<string, Resource>;
    beforeAll(() => {
      branded = synthesizeServiceWith({
        linkDomain: { domainName: 'go.example.com', certificateArn: CERTIFICATE_ARN, ...ZONE },
        apiDomain: { domainName: 'api.example.com', ...ZONE },
        webAclArn: WEB_ACL_ARN,
        priceClass: 'PriceClass_100',
      });
      brandedResources = resourcesOf(branded);
    });
    const distributionOf = (s: SynthesizedService, r: Record<string, Resource>) => r[logicalId(s.stack.edge.distribution)];

    it('passes the AWS Solutions checks without acknowledging CFR2 or CFR4', () => {
      expect(nagViolations(branded)).toEqual([]);
      expect(acknowledged(distributionOf(branded, brandedResources))).not.toEqual(expect.arrayContaining(['AwsSolutions-CFR2']));
      expect(acknowledged(distributionOf(branded, brandedResources))).not.toEqual(expect.arrayContaining(['AwsSolutions-CFR4']));
    });

    it('adds the aliases, the certificate with TLSv1.2_2021, the web ACL and the price class, and changes nothing else', () => {
      const { Aliases, ViewerCertificate, WebACLId, PriceClass, ...rest } = distributionOf(branded, brandedResources).Properties
        .DistributionConfig;
      expect({ Aliases, ViewerCertificate, WebACLId, PriceClass }).toEqual({
        Aliases: ['go.example.com', 'api.example.com'],
        ViewerCertificate: { AcmCertificateArn: CERTIFICATE_ARN, MinimumProtocolVersion: 'TLSv1.2_2021', SslSupportMethod: 'sni-only' },
        WebACLId: WEB_ACL_ARN,
        PriceClass: 'PriceClass_100',
      });
      expect(rest).toEqual(distributionOf(service, resources).Properties.DistributionConfig);
    });

    it('writes A and AAAA alias records to the distribution for both names', () => {
      const distributionId = logicalId(branded.stack.edge.distribution);
      const records = ofType(brandedResources, 'AWS::Route53::RecordSet').map(([, r]) => r.Properties);
      expect(records.map((r) => `${r.Name} ${r.Type}`).sort()).toEqual([
        'api.example.com. A',
        'api.example.com. AAAA',
        'go.example.com. A',
        'go.example.com. AAAA',
      ]);
      for (const record of records) {
        expect(record).toMatchObject({
          HostedZoneId: ZONE.hostedZoneId,
          AliasTarget: { DNSName: { 'Fn::GetAtt': [distributionId, 'DomainName'] } },
        });
      }
    });

    it('publishes the link domain as the base URL, on which admin prints tracking links', () => {
      expect(branded.template.toJSON().Outputs[outputKey.baseUrl()].Value).toBe('https://go.example.com');
    });

    it('protects every data table from deletion by default (no deletionProtection given), and keeps it when the stack is deleted', () => {
      for (const [, table] of ofType(brandedResources, 'AWS::DynamoDB::Table')) {
        expect([table.DeletionPolicy, table.Properties.DeletionProtectionEnabled]).toEqual(['Retain', true]);
      }
    });
  });
});

describe('a stack in us-east-1 with a hosted zone and no certificate ARN', () => {
  it('makes the certificate itself, validated by DNS in the zone', () => {
    const template = serviceTemplateWith({
      env: { account: ACCOUNT, region: 'us-east-1' },
      linkDomain: { domainName: 'go.example.com', ...ZONE },
    });
    template.hasResourceProperties('AWS::CertificateManager::Certificate', {
      DomainName: 'go.example.com',
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: 'go.example.com', HostedZoneId: ZONE.hostedZoneId }],
    });
    const [[certificateId]] = Object.entries(template.findResources('AWS::CertificateManager::Certificate'));
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: { Aliases: ['go.example.com'], ViewerCertificate: { AcmCertificateArn: { Ref: certificateId } } },
    });
  });
});

describe('a stack outside us-east-1 with hosted zones and no certificate ARN', () => {
  const dir = mkdtempSync(join(tmpdir(), 'certificate-stack-'));
  const zoned = (region?: string) => ({
    kind: 'dev',
    ...(region && { region }),
    linkDomain: { domainName: 'go.example.com', ...ZONE },
    apiDomain: { domainName: 'api.example.com', ...ZONE },
  });
  const appFor = (config: object) => {
    writeFileSync(join(dir, 'dev.json'), JSON.stringify(config));
    return serviceApp({ configDir: dir });
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gets its certificate from a us-east-1 stack the app adds, read by its output, with no custom resource or nag finding', () => {
    const { app, stack, certificateStack } = appFor(zoned('eu-west-1'));
    // Throws on any cdk-nag error, in either stack.
    const assembly = app.synth();
    expect(nagViolationsIn(assembly.directory)).toEqual([]);
    expect(certificateStack).toBeDefined();
    expect([certificateStack!.region, certificateStack!.stackName, stack.dependencies]).toEqual([
      'us-east-1',
      'AttributionService-Certificate',
      [certificateStack],
    ]);
    const certificates = Template.fromStack(certificateStack!);
    certificates.resourceCountIs('AWS::CertificateManager::Certificate', 1);
    certificates.hasResourceProperties('AWS::CertificateManager::Certificate', {
      DomainName: 'go.example.com',
      SubjectAlternativeNames: ['api.example.com'],
      ValidationMethod: 'DNS',
      DomainValidationOptions: [
        { DomainName: 'go.example.com', HostedZoneId: ZONE.hostedZoneId },
        { DomainName: 'api.example.com', HostedZoneId: ZONE.hostedZoneId },
      ],
    });
    const service = Template.fromStack(stack);
    service.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    const distribution = Object.values(service.findResources('AWS::CloudFront::Distribution'))[0] as Resource;
    expect(distribution.Properties.DistributionConfig.Aliases).toEqual(['go.example.com', 'api.example.com']);
    expect(distribution.Properties.DistributionConfig.ViewerCertificate).toEqual({
      AcmCertificateArn: {
        'Fn::GetStackOutput': { StackName: 'AttributionService-Certificate', Region: 'us-east-1', OutputName: expect.any(String) },
      },
      MinimumProtocolVersion: 'TLSv1.2_2021',
      SslSupportMethod: 'sni-only',
    });
    const resourceTypes = Object.values(service.toJSON().Resources as Record<string, Resource>).map((r) => r.Type);
    expect(resourceTypes.filter((type) => type.startsWith('Custom::'))).toEqual([]);
  });

  it('makes no certificate stack with a certificate ARN, or in us-east-1, and asks for the region when it is not set', () => {
    expect(
      appFor({
        ...zoned('eu-west-1'),
        apiDomain: undefined,
        linkDomain: { domainName: 'go.example.com', certificateArn: CERTIFICATE_ARN, ...ZONE },
      }).certificateStack,
    ).toBeUndefined();
    expect(appFor(zoned('us-east-1')).certificateStack).toBeUndefined();
    expect(() => appFor(zoned())).toThrow(/set region in config\/<env>\.json/);
  });
});

describe('the deployment options refuse at synth', () => {
  const build = (props: AttributionServiceStackProps) => () =>
    new AttributionServiceStack(new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } }), 'AttributionService', props);
  const link = (domain: Partial<CustomDomain>): AttributionServiceStackProps => ({
    linkDomain: { domainName: 'go.example.com', certificateArn: CERTIFICATE_ARN, ...domain },
  });

  it.each([
    ['a certificate outside us-east-1', link({ certificateArn: CERTIFICATE_ARN.replace('us-east-1', 'eu-west-1') }), /us-east-1/],
    ['a regional web ACL', { ...link({}), webAclArn: WEB_ACL_ARN.replace(':global/', ':regional/') }, /CloudFront-scope/],
    ['a name outside its hosted zone', link({ ...ZONE, hostedZoneName: 'example.org' }), /not in the hosted zone/],
    ['a hosted zone id without its name', link({ hostedZoneId: ZONE.hostedZoneId }), /go together/],
    ['an uppercase or wildcard name', link({ domainName: '*.Example.com' }), /lowercase DNS name/],
    [
      'two certificates',
      { ...link({}), apiDomain: { domainName: 'api.example.com', certificateArn: CERTIFICATE_ARN.replace('0a1b', 'ffff') } },
      /one certificate per distribution/,
    ],
    ['no certificate and no hosted zone', link({ certificateArn: undefined }), /need a certificateArn/],
    [
      'no certificate outside us-east-1',
      { ...link({ certificateArn: undefined, ...ZONE }), env: { account: ACCOUNT, region: 'eu-west-1' } },
      /need a certificateArn/,
    ],
    ['the same name twice', { ...link({}), apiDomain: { domainName: 'go.example.com' } }, /both go.example.com/],
    ['an unknown price class', { priceClass: 'PriceClass_50' as 'PriceClass_100' }, /priceClass must be one of/],
  ])('%s', (_, props, message) => {
    expect(build(props)).toThrow(message);
  });
});
