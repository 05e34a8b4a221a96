import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { COMPANY_ID_MAX } from '../../functions/domain/team/members';
import { CONSOLE_VARIABLES, type ConsoleSignIn } from '../function-environment';
import { USER_POOL_ADMIN_ACTIONS } from '../permissions';
import type { ServiceFunction } from './service-function';

export interface ConsoleSiteProps {
  /** The console API's function (lib/manifest.ts, `console-api`). */
  readonly api: ServiceFunction;
  readonly accessLogs: s3.IBucket;
  /** The service's public base URL, which the commands print links on. */
  readonly baseUrl: string;
}

/** The page's requests per second at the console API's stage: people clicking, never a machine's load. */
const CONSOLE_THROTTLE = { rateLimit: 20, burstLimit: 40 };

/**
 * The deployed console (docs/console.md, "The deployed console"; ADR 0007): its static files in a
 * private bucket behind a CloudFront distribution of its own, sign-in with a Cognito user pool
 * (authorization code with PKCE, optional TOTP MFA, no self sign-up: users are invited), and the
 * console API, an HTTP API whose JWT authorizer checks the pool's ID tokens before the function
 * runs the command registry. The files are put in the bucket after a deploy by `npm run
 * console:publish -- --stack NAME` (console/publish.ts): a CDK BucketDeployment would add a
 * Python function with a managed policy, outside the stack's rule that every function is a
 * ServiceFunction. The API is reached through the same distribution under /api/, so the
 * page calls its own origin and needs no CORS.
 */
export class ConsoleSite extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly userPool: cognito.UserPool;
  readonly client: cognito.UserPoolClient;
  readonly httpApi: apigw.HttpApi;
  readonly url: string;
  /** The pool's issuer, the authority the page signs in with. */
  readonly issuer: string;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    const stack = Stack.of(this);

    this.userPool = new cognito.UserPool(this, 'UserPool', {
      // Users are invited by an admin (`admin user invite`, the console's Users page), never sign themselves up.
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      mfa: cognito.Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: { minLength: 12, requireLowercase: true, requireUppercase: true, requireDigits: true, requireSymbols: true },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      customAttributes: {
        company_id: new cognito.StringAttribute({ minLen: 1, maxLen: COMPANY_ID_MAX, mutable: true }),
        role: new cognito.StringAttribute({ minLen: 1, maxLen: 16, mutable: true }),
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG2',
      reason:
        'MFA is optional (TOTP, set up by each user at sign-in): the issue asks for MFA available, not forced; an operator who ' +
        'wants it required sets the pool to MFA ON (docs/console.md, "Sign-in").',
    });
    for (const id of ['AwsSolutions-COG3', 'AwsSolutions-COG8'])
      Validations.of(this.userPool).acknowledge({
        id,
        reason:
          'Threat protection (advanced security) needs the Plus feature plan at a cost per active user; the pool has no ' +
          'self sign-up, strong passwords and optional TOTP. Turn it on in the pool for a deployment that wants it.',
      });

    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 'console-bucket/',
      // The files are the console's bundle, put again by every publish.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: false,
    });

    const accessLog = new logs.LogGroup(this, 'ApiAccessLog', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.httpApi = new apigw.HttpApi(this, 'Api', {
      description: "The deployed console's API: the admin command registry for signed-in console users.",
      createDefaultStage: false,
    });
    new apigw.HttpStage(this, 'Stage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: CONSOLE_THROTTLE,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLog),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTimeEpoch',
            sourceIp: '$context.identity.sourceIp',
            routeKey: '$context.routeKey',
            status: '$context.status',
            sub: '$context.authorizer.claims.sub',
            authorizerError: '$context.authorizer.error',
          }),
        ),
      },
    });

    const api = `${this.httpApi.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Attribution console',
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: this.headersPolicy(),
      },
      additionalBehaviors: {
        '/api/*': {
          origin: new origins.HttpOrigin(api, {
            protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
            originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
            readTimeout: Duration.seconds(30),
          }),
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
          // Every answer is one member's: nothing is kept at the edge. Authorization reaches the API.
          cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
          originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        },
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: props.accessLogs,
      logFilePrefix: 'console-cloudfront/',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason:
        "The console serves on its distribution's own *.cloudfront.net name, whose default certificate CloudFront fixes at a " +
        'TLSv1 minimum; browsers negotiate TLS 1.2 or 1.3 with it. A custom domain for the console is not configurable yet.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason: 'Console users sign in from wherever they work; access is by Cognito sign-in and role, not by country.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR2',
      reason:
        'Every API request needs a Cognito ID token checked by the JWT authorizer before any function runs, and the stage ' +
        'is throttled; the static files are public by nature. A web ACL would add a fixed monthly fee.',
    });
    this.url = `https://${this.distribution.distributionDomainName}`;

    this.userPool.addDomain('Domain', {
      // Cognito's own domain: a prefix unique in the region, made of the stack's name and account.
      cognitoDomain: { domainPrefix: `${stack.stackName.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-console-${stack.account}` },
    });
    this.client = this.userPool.addClient('Client', {
      generateSecret: false,
      // Only the hosted sign-in's authorization code flow (with PKCE, oidc-client-ts): no password grant from the page.
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL, cognito.OAuthScope.PROFILE],
        callbackUrls: [`${this.url}/`],
        logoutUrls: [`${this.url}/`],
      },
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.hours(12),
      // The client reads role and company but cannot write them: a user cannot raise their own role.
      readAttributes: new cognito.ClientAttributes()
        .withStandardAttributes({ email: true, emailVerified: true })
        .withCustomAttributes('company_id', 'role'),
      // A name alone: an empty list would read as no list, every attribute writable.
      writeAttributes: new cognito.ClientAttributes().withStandardAttributes({ fullname: true }),
    });

    const issuer = `https://cognito-idp.${stack.region}.${stack.urlSuffix}/${this.userPool.userPoolId}`;
    const authorizer = new HttpJwtAuthorizer('CognitoIdToken', issuer, { jwtAudience: [this.client.userPoolClientId] });
    const integration = new HttpLambdaIntegration('ConsoleApi', props.api);
    this.httpApi.addRoutes({ path: '/api/me', methods: [apigw.HttpMethod.GET], integration, authorizer });
    this.httpApi.addRoutes({ path: '/api/command', methods: [apigw.HttpMethod.POST], integration, authorizer });

    // The variables and grant of the manifest's `consoleUsers` (lib/function-environment.ts, lib/permissions.ts),
    // which the local runtime gives the same function with its stand-in's values.
    const signIn: ConsoleSignIn = {
      issuer,
      clientId: this.client.userPoolClientId,
      userPoolId: this.userPool.userPoolId,
      baseUrl: props.baseUrl,
    };
    for (const [value, name] of Object.entries(CONSOLE_VARIABLES)) props.api.addEnvironment(name, signIn[value as keyof ConsoleSignIn]);
    props.api.addToRolePolicy(new iam.PolicyStatement({ actions: [...USER_POOL_ADMIN_ACTIONS], resources: [this.userPool.userPoolArn] }));

    this.issuer = issuer;
  }

  /** The local console's headers (console/server.ts), with Cognito's sign-in endpoints as the page's only other origin. */
  private headersPolicy(): cloudfront.ResponseHeadersPolicy {
    const region = Stack.of(this).region;
    return new cloudfront.ResponseHeadersPolicy(this, 'Headers', {
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
            `connect-src 'self' https://*.auth.${region}.amazoncognito.com https://cognito-idp.${region}.amazonaws.com; ` +
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
    });
  }
}
