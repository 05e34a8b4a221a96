import { Duration, Lazy, RemovalPolicy, SecretValue, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { originVerifyHeader, type RouteThrottle } from '../manifest';

/** Steady requests per second and burst the API Gateway stage lets through on a route without a throttle of its own. */
export type ApiThrottle = RouteThrottle;

/**
 * Stage throttling, so that one runaway client cannot run up the bill: well above what one app's
 * SDKs and links need, far below API Gateway's account limit (10,000/s). A deployer changes it
 * with `-c apiRateLimit=... -c apiBurstLimit=...` (bin/app.ts). Over it, API Gateway answers 429
 * {"message":"Too Many Requests"} before any function runs. It is what POST /event has; every
 * other route has its own, lower one (`throttle` in lib/manifest.ts, set by throttleRoute).
 */
export const DEFAULT_THROTTLE: ApiThrottle = { rateLimit: 1000, burstLimit: 2000 };

export interface EdgeProps {
  /** Where CloudFront writes its standard access logs. */
  readonly accessLogs: s3.IBucket;
  /** Stage throttling; DEFAULT_THROTTLE for what is not given. */
  readonly throttle?: Partial<ApiThrottle>;
  /**
   * The version of the origin secret CloudFront sends (a Secrets Manager VersionId); by default
   * the current one when the distribution is deployed. Giving a new one is how a rotated value
   * reaches CloudFront: CloudFormation re-reads a secret only for a resource whose template changed.
   */
  readonly originSecretVersion?: string;
}

/**
 * The way in: CloudFront in front of the HTTP API. CloudFront adds the viewer's address, country
 * and ASN (CloudFront-Viewer-* headers, overwriting whatever a client sent) and a secret origin
 * header, so handlers believe those headers only on requests that really came through it.
 */
export class Edge extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly distribution: cloudfront.Distribution;
  /**
   * The origin secret. CloudFront gets its value as a deploy-time dynamic reference (never in the
   * template or cdk.out); functions get its ARN and read the value themselves (bindOriginSecret).
   */
  readonly originSecret: secretsmanager.Secret;
  /** https://<distribution domain>, the service's public base URL. */
  readonly baseUrl: string;
  private readonly stageThrottle: ApiThrottle;
  /** The stage's RouteSettings, by route key, filled in by throttleRoute. */
  private readonly routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};

  constructor(scope: Construct, id: string, props: EdgeProps) {
    super(scope, id);
    const stack = Stack.of(this);

    const secret = new secretsmanager.Secret(this, 'OriginVerifySecret', {
      description: 'Value of the x-origin-verify header CloudFront adds to every request to the API.',
      generateSecretString: { excludePunctuation: true, passwordLength: 48 },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A rotation Lambda cannot change the header CloudFront sends, which CloudFormation resolves at deploy time. ' +
        'It is rotated by hand (docs/secrets.md): put-secret-value, after which functions accept the new and the ' +
        'previous value within five minutes, then a deploy with -c originSecretVersion=<VersionId> for CloudFront.',
    });
    this.originSecret = secret;
    const headerValue = SecretValue.secretsManager(secret.secretArn, { versionId: props.originSecretVersion }).unsafeUnwrap();

    this.api = new apigw.HttpApi(this, 'HttpApi', {
      description: 'Attribution service; reached through CloudFront.',
      // The stage is made below, with access logging, which the default stage cannot have.
      createDefaultStage: false,
    });
    const accessLog = new logs.LogGroup(this, 'ApiAccessLog', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stageThrottle = {
      rateLimit: props.throttle?.rateLimit ?? DEFAULT_THROTTLE.rateLimit,
      burstLimit: props.throttle?.burstLimit ?? DEFAULT_THROTTLE.burstLimit,
    };
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: this.stageThrottle,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLog),
        // JSON, so that Logs Insights can filter by route and status without parsing.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTimeEpoch',
            sourceIp: '$context.identity.sourceIp',
            routeKey: '$context.routeKey',
            path: '$context.path',
            status: '$context.status',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });

    // HttpStage has no property for per-route settings; the routes are added later, by the endpoints.
    (this.stage.node.defaultChild as apigw.CfnStage).routeSettings = Lazy.any({
      produce: () => (Object.keys(this.routeSettings).length > 0 ? this.routeSettings : undefined),
    });

    const apiDomain = `${this.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Attribution service',
      defaultBehavior: {
        origin: new origins.HttpOrigin(apiDomain, {
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
          // API Gateway stops an integration after 30 seconds; CloudFront should not give up sooner.
          readTimeout: Duration.seconds(30),
          customHeaders: { [originVerifyHeader]: headerValue },
        }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        // Every answer is per caller (signed ingestion, clicks, private reports): nothing is shared at the edge.
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        // All viewer headers (Authorization and the X-Service-* signature headers included), all query
        // strings, and CloudFront's own headers among them CloudFront-Viewer-Address, -Country and -ASN;
        // but not the viewer's Host, which API Gateway would reject. A custom policy cannot do this:
        // origin request policies may not list Authorization.
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: props.accessLogs,
      logFilePrefix: 'cloudfront/',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason:
        'The distribution serves on its own *.cloudfront.net name, whose default certificate CloudFront fixes at a TLSv1 ' +
        'minimum; a custom domain with an ACM certificate and TLSv1.2_2021 is the operator’s choice at deploy time.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'Country filtering is per tracking link and done by the link handler (it still redirects filtered clicks); ' +
        'a geo restriction at the edge would break ingestion and redirects for whole countries.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR2',
      reason:
        'No WAF by default: it costs a fixed monthly fee per web ACL; requests are authenticated by HMAC or bearer key, ' +
        'clicks are rate limited per IP block in the handler. Operators can attach a web ACL without code changes.',
    });

    this.baseUrl = `https://${this.distribution.distributionDomainName}`;
  }

  /**
   * Gives a route its own token bucket in the stage, so that a flood on it is answered 429 there
   * and leaves the other routes theirs. Never above the stage's: a deployer who lowers the stage
   * lowers every route. The stage is deployed after the route, as API Gateway refuses settings
   * for a route it does not have yet.
   */
  throttleRoute(route: apigw.HttpRoute, routeKey: string, throttle: RouteThrottle): void {
    this.routeSettings[routeKey] = {
      ThrottlingRateLimit: Math.min(throttle.rateLimit, this.stageThrottle.rateLimit),
      ThrottlingBurstLimit: Math.min(throttle.burstLimit, this.stageThrottle.burstLimit),
    };
    this.stage.node.addDependency(route);
  }
}
