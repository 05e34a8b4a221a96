import { Match } from 'aws-cdk-lib/assertions';
import { logicalId, synthesizeService } from './synthesize';

const service = synthesizeService();
const { template } = service;
const site = service.stack.console;

describe('the deployed console', () => {
  it('passes the AWS Solutions checks with nothing of the console left unacknowledged', () => {
    const violations = service.validationReport.pluginReports
      .filter((report) => report.pluginName === 'AwsSolutions')
      .flatMap((report) => report.violations ?? []);
    expect(violations).toEqual([]);
  });

  it('signs users in with a user pool that takes invitations only, offers TOTP MFA and holds role and company as custom attributes', () => {
    template.hasResourceProperties('AWS::Cognito::UserPool', {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      MfaConfiguration: 'OPTIONAL',
      EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
      Schema: Match.arrayWith([
        Match.objectLike({ Name: 'company_id', AttributeDataType: 'String', Mutable: true }),
        Match.objectLike({ Name: 'role', AttributeDataType: 'String', Mutable: true }),
      ]),
    });
  });

  it("gives the page a public client of the authorization code flow alone, which cannot write a user's role or company", () => {
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthFlowsUserPoolClient: true,
      WriteAttributes: ['name'],
      ReadAttributes: Match.arrayWith(['custom:company_id', 'custom:role']),
    });
  });

  it('puts a JWT authorizer on the pool (issuer and the client as audience) before both console API routes', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: {
        Audience: [{ Ref: logicalId(site.client) }],
        Issuer: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith([{ Ref: logicalId(site.userPool) }])]) }),
      },
    });
    for (const route of ['GET /api/me', 'POST /api/command']) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        ApiId: { Ref: logicalId(site.httpApi) },
        RouteKey: route,
        AuthorizationType: 'JWT',
      });
    }
    const routes = Object.values(
      template.findResources('AWS::ApiGatewayV2::Route', { Properties: { ApiId: { Ref: logicalId(site.httpApi) } } }),
    );
    expect(routes.map((route) => route.Properties.AuthorizationType)).toEqual(['JWT', 'JWT']);
  });

  it('serves the files from a private bucket through CloudFront with origin access control, and /api/* from the console API uncached', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LoggingConfiguration: { LogFilePrefix: 'console-bucket/' },
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Comment: 'Attribution console',
        DefaultRootObject: 'index.html',
        Origins: Match.arrayWith([Match.objectLike({ OriginAccessControlId: Match.anyValue() })]),
        CacheBehaviors: [
          Match.objectLike({
            PathPattern: '/api/*',
            ViewerProtocolPolicy: 'https-only',
            CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          }),
        ],
      }),
    });
  });

  it("gives the console API's function the pool's ids and the Cognito admin calls on that pool alone", () => {
    const api = service.stack.functions.get('console-api');
    expect(api).toBeDefined();
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp("deployed console's API"),
      Environment: {
        Variables: Match.objectLike({
          CONSOLE_CLIENT_ID: { Ref: logicalId(site.client) },
          CONSOLE_USER_POOL_ID: { Ref: logicalId(site.userPool) },
          CONSOLE_ISSUER: Match.anyValue(),
        }),
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['cognito-idp:AdminCreateUser', 'cognito-idp:AdminDeleteUser', 'cognito-idp:AdminGetUser', 'cognito-idp:ListUsers'],
            Resource: { 'Fn::GetAtt': [logicalId(site.userPool), 'Arn'] },
          }),
        ]),
      },
    });
  });

  it('outputs the console URL and its user pool for `admin --stack`', () => {
    template.hasOutput('ConsoleUrl', {});
    template.hasOutput('ConsoleUserPoolId', { Value: { Ref: logicalId(site.userPool) } });
  });
});
