import { Duration, Lazy, RemovalPolicy, SecretValue, Stack, Token, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as route53Targets from 'aws-cdk-lib/aws-route53-targets';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { LINK_DOMAIN } from '../../functions/domain/links/app-links';
import { REPORT_ATTRIBUTION_PATHS, WELL_KNOWN_PATHS } from '../function-constants';
import { functionUrlPathPattern, originVerifyHeader, type RouteThrottle, viewerHostHeader } from '../manifest';
import { domainCertificate, hostedZoneOf } from './domain-certificate';

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

/**
 * A name the distribution also answers to (docs/domains.md). CloudFront needs a certificate in
 * us-east-1 that covers it: `certificateArn`, or, when the stack itself is deployed in us-east-1
 * and the hosted zone is given, one the stack makes and validates in that zone. With the zone,
 * the stack also writes the A and AAAA alias records.
 */
export interface CustomDomain {
  readonly domainName: string;
  /** An ACM certificate in us-east-1 covering this name (and the other domain's, if both are set). */
  readonly certificateArn?: string;
  /** The Route 53 public hosted zone the name is in, by id and name (both or neither). */
  readonly hostedZoneId?: string;
  readonly hostedZoneName?: string;
}

export type PriceClass = 'PriceClass_100' | 'PriceClass_200' | 'PriceClass_All';

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
  /** The tracking links' branded name (`go.example.com`): the public base URL when set. */
  readonly linkDomain?: CustomDomain;
  /** The name SDKs and server-side callers use (`api.example.com`). */
  readonly apiDomain?: CustomDomain;
  /** A CloudFront-scope WAF web ACL (`arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>`). */
  readonly webAclArn?: string;
  /** CloudFront's price class; unset, CloudFront's default (every edge location). */
  readonly priceClass?: PriceClass;
  /**
   * The certificate of the custom domains when another stack made it: the us-east-1 certificate
   * stack bin/app.ts adds for a stack in another region whose domains give their hosted zones.
   */
  readonly certificate?: acm.ICertificate;
}

/**
 * The way in: CloudFront in front of the HTTP API, and of the function URLs it calls directly
 * (serveFromFunctionUrl: the tracking-link redirect, issue 41). CloudFront adds the viewer's
 * address, country and ASN (CloudFront-Viewer-* headers, overwriting whatever a client sent) and a
 * secret origin header, so handlers believe those headers only on requests that really came through it.
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
  /** The service's public base URL: https://<link domain> when one is set, else https://<distribution domain>. */
  readonly baseUrl: string;
  /** The certificate the distribution serves its custom domains with, if any. */
  readonly certificate?: acm.ICertificate;
  /** The functions CloudFront calls through their function URLs (serveFromFunctionUrl), by manifest route key. */
  readonly functionUrlRoutes = new Map<string, lambda.IFunction>();
  /** The origin header's value: a deploy-time reference to the secret, for every origin. */
  private readonly originHeaderValue: string;
  private readonly stageThrottle: ApiThrottle;
  /** Hosted zones by id, one construct each however many domains and records use it. */
  private readonly zones = new Map<string, route53.IHostedZone>();
  /** Set once, by authorizeWith. */
  private originAuthorizer?: apigw.IHttpRouteAuthorizer;
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
    this.originHeaderValue = headerValue;

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

    const domains = namedDomains(props);
    this.certificate = props.certificate ?? this.certificateFor(domains);
    const apiDomain = `${this.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    const origin = new origins.HttpOrigin(apiDomain, {
      protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
      // API Gateway stops an integration after 30 seconds; CloudFront should not give up sooner.
      readTimeout: Duration.seconds(30),
      customHeaders: { [originVerifyHeader]: headerValue },
    });
    const toApi = {
      origin,
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      // Every answer is per caller (signed ingestion, clicks, private reports): nothing is shared at the edge.
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      // All viewer headers (Authorization and the X-Service-* signature headers included), all query
      // strings, and CloudFront's own headers among them CloudFront-Viewer-Address, -Country and -ASN;
      // but not the viewer's Host, which API Gateway would reject. A custom policy cannot do this:
      // origin request policies may not list Authorization.
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
    };
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Attribution service',
      defaultBehavior: { ...toApi, allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL },
      // The well-known files answer by the viewer's Host (docs/deep-links.md), which the origin
      // request policy leaves behind: a CloudFront Function copies it into x-viewer-host, a header
      // the policy forwards (it forwards every viewer header, and a function's are the viewer's),
      // overwriting any value the client sent. Only on these paths: every other request is spared
      // the function's run and its price.
      additionalBehaviors: {
        // Apple's postbacks to the well-known report-attribution paths (POST, for skan-postback),
        // before the GET-only /.well-known/* that would refuse them; CloudFront takes the first match.
        ...Object.fromEntries(
          REPORT_ATTRIBUTION_PATHS.map((path) => [path, { ...toApi, allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL }]),
        ),
        [WELL_KNOWN_PATHS]: {
          ...toApi,
          allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
          functionAssociations: [{ eventType: cloudfront.FunctionEventType.VIEWER_REQUEST, function: this.viewerHostFunction() }],
        },
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: props.accessLogs,
      logFilePrefix: 'cloudfront/',
      // Each only when configured, so that a stack without them keeps its template as it was.
      ...(this.certificate && {
        domainNames: domains.map(({ domain }) => domain.domainName),
        certificate: this.certificate,
        minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      }),
      ...(props.webAclArn !== undefined && { webAclId: webAclArnOf(props.webAclArn) }),
      ...(props.priceClass !== undefined && { priceClass: priceClassOf(props.priceClass) }),
    });
    this.addAliasRecords(domains);
    if (!this.certificate) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          'No linkDomain or apiDomain is configured, so the distribution serves on its own *.cloudfront.net name, whose ' +
          'default certificate CloudFront fixes at a TLSv1 minimum; with either (and a us-east-1 certificate) it serves ' +
          'TLSv1.2_2021 (docs/domains.md).',
      });
    }
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'Country filtering is per tracking link and done by the link handler (it still redirects filtered clicks); ' +
        'a geo restriction at the edge would break ingestion and redirects for whole countries.',
    });
    if (props.webAclArn === undefined) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'No webAclArn is configured: a web ACL costs a fixed monthly fee; requests are authenticated by HMAC or bearer key, ' +
          'clicks are rate limited per IP block in the handler. Setting webAclArn attaches one (docs/domains.md).',
      });
    }

    this.baseUrl = `https://${props.linkDomain?.domainName ?? this.distribution.distributionDomainName}`;
  }

  /**
   * Serves a manifest route from a function's URL instead of the HTTP API (issue 41): a cache
   * behavior of its own whose origin is the URL, which only this distribution may call. The URL's
   * auth type is AWS_IAM and the Origin Access Control signs every request (SigV4, always), so a
   * request to the URL from anywhere else is refused by Lambda before the function runs; the
   * function may be invoked through its URL only with this distribution as the source
   * (lambda:InvokeFunctionUrl and lambda:InvokeFunction, each with the distribution's SourceArn,
   * which FunctionUrlOrigin.withOriginAccessControl grants). The origin header is added as on the
   * API's origin, so the handler's origin check and viewerOf() are unchanged.
   */
  serveFromFunctionUrl(fn: lambda.IFunction, route: string): lambda.FunctionUrl {
    const pathPattern = functionUrlPathPattern(route);
    const url = new lambda.FunctionUrl(fn, 'FunctionUrl', { function: fn, authType: lambda.FunctionUrlAuthType.AWS_IAM });
    this.distribution.addBehavior(
      pathPattern,
      origins.FunctionUrlOrigin.withOriginAccessControl(url, {
        customHeaders: { [originVerifyHeader]: this.originHeaderValue },
      }),
      {
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        // All viewer headers (User-Agent) and query strings, and CloudFront-Viewer-Address, -Country
        // and -ASN, as on the API's behaviors; not the viewer's Host, for Lambda routes a function
        // URL's request by its own host name, and OAC signs with it.
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        // GET routes only: POST and the others would have to carry a signed body hash (OAC).
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
      },
    );
    this.functionUrlRoutes.set(route, fn);
    return url;
  }

  /** Copies the viewer's Host into x-viewer-host (cloudfront-js-2.0). */
  private viewerHostFunction(): cloudfront.Function {
    return new cloudfront.Function(this, 'ViewerHostFunction', {
      comment: `Copies the viewer's Host into ${viewerHostHeader} for the well-known files`,
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(viewerHostCode),
    });
  }

  /**
   * The one certificate of the distribution's custom domains (CloudFront takes one): the ARN
   * given (the same one when both domains give one), or, in a us-east-1 stack whose domains all
   * have their hosted zone, one made here and validated by DNS in those zones. Anything else is
   * refused at synth, where a deploy would fail later or, worse, half way.
   */
  private certificateFor(named: readonly NamedDomain[]): acm.ICertificate | undefined {
    const domains = named.map(({ domain }) => domain);
    if (domains.length === 0) return undefined;
    const arns = [...new Set(domains.flatMap((domain) => (domain.certificateArn === undefined ? [] : [domain.certificateArn])))];
    if (arns.length > 1) {
      throw new Error(
        `linkDomain and apiDomain give different certificates (${arns.join(', ')}); CloudFront serves one certificate per ` +
          'distribution: give one that covers both names to both, or to one of them',
      );
    }
    const [arn] = arns;
    if (arn !== undefined) return acm.Certificate.fromCertificateArn(this, 'Certificate', certificateArnOf(arn));
    const region = Stack.of(this).region;
    const unzoned = domains.filter((domain) => domain.hostedZoneId === undefined);
    if (unzoned.length > 0 || Token.isUnresolved(region) || region !== 'us-east-1') {
      throw new Error(
        `${domains.map((domain) => domain.domainName).join(' and ')} need a certificateArn (an ACM certificate in us-east-1, ` +
          'docs/domains.md), or their hosted zones: the stack makes the certificate when it is in us-east-1, and the app ' +
          '(bin/app.ts) in a us-east-1 certificate stack otherwise',
      );
    }
    return domainCertificate(
      this,
      'Certificate',
      domains.flatMap((domain) => {
        const zone = this.hostedZoneOf(domain);
        return zone ? [{ domainName: domain.domainName, zone }] : [];
      }),
    );
  }

  /** A and AAAA alias records to the distribution for each domain whose hosted zone is given. */
  private addAliasRecords(domains: readonly NamedDomain[]): void {
    const target = route53.RecordTarget.fromAlias(new route53Targets.CloudFrontTarget(this.distribution));
    for (const { kind, domain } of domains) {
      const zone = this.hostedZoneOf(domain);
      if (!zone) continue;
      new route53.ARecord(this, `${kind}DomainAliasA`, { zone, recordName: domain.domainName, target });
      new route53.AaaaRecord(this, `${kind}DomainAliasAaaa`, { zone, recordName: domain.domainName, target });
    }
  }

  /** The domain's hosted zone, if it gives one. */
  private hostedZoneOf(domain: CustomDomain): route53.IHostedZone | undefined {
    return hostedZoneOf(this, this.zones, domain);
  }

  /**
   * The authorizer every route has (authorizeWith): API Gateway answers 401 to a request without
   * the origin header and 403 to one with a wrong value, before the route's function runs.
   */
  get authorizer(): apigw.IHttpRouteAuthorizer | undefined {
    return this.originAuthorizer;
  }

  /**
   * Makes `handler` (the manifest's authorizer, functions/origin-authorizer.ts) the authorizer of
   * every route added after this. Its identity source is the origin header, so API Gateway
   * refuses a request sent to the execute-api URL without it (401) without invoking anything, and
   * keeps the answer for a value it has seen for `cacheSeconds` (the manifest's): a flood of
   * direct requests costs neither a route function nor, mostly, the authorizer.
   */
  authorizeWith(handler: lambda.IFunction, cacheSeconds: number): void {
    if (this.originAuthorizer) throw new Error('the HTTP API has an authorizer already: the manifest names one authorizer');
    this.originAuthorizer = new HttpLambdaAuthorizer('OriginAuthorizer', handler, {
      authorizerName: 'origin-verify',
      identitySource: [`$request.header.${originVerifyHeader}`],
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      resultsCacheTtl: Duration.seconds(cacheSeconds),
    });
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

interface NamedDomain {
  /** Which option set it, and the prefix of its records' construct ids. */
  readonly kind: 'Link' | 'Api';
  readonly domain: CustomDomain;
}

/** The viewer-request function's code: a request without a Host (HTTP/1.0) gets an empty value, which no domain matches. */
export const viewerHostCode = [
  'function handler(event) {',
  '  var request = event.request;',
  `  request.headers['${viewerHostHeader}'] = { value: request.headers.host ? request.headers.host.value : '' };`,
  '  return request;',
  '}',
].join('\n');

/** A DNS name CloudFront accepts as an alternate domain name: the rule an app's --link-domain follows too. */
const DOMAIN_NAME = LINK_DOMAIN;
const HOSTED_ZONE_ID = /^Z[A-Z0-9]{1,31}$/;

/** The configured domains, each checked: a well-formed name, its zone given whole, the name inside it. */
function namedDomains(props: EdgeProps): NamedDomain[] {
  const named: NamedDomain[] = [];
  if (props.linkDomain) named.push({ kind: 'Link', domain: props.linkDomain });
  if (props.apiDomain) named.push({ kind: 'Api', domain: props.apiDomain });
  for (const { kind, domain } of named) {
    const option = `${kind === 'Link' ? 'linkDomain' : 'apiDomain'}`;
    if (!DOMAIN_NAME.test(domain.domainName))
      throw new Error(`${option}.domainName must be a lowercase DNS name, got ${domain.domainName}`);
    const { hostedZoneId, hostedZoneName } = domain;
    if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) {
      throw new Error(`${option}: hostedZoneId and hostedZoneName go together (the zone's id and its name)`);
    }
    if (hostedZoneId !== undefined && !HOSTED_ZONE_ID.test(hostedZoneId)) {
      throw new Error(`${option}.hostedZoneId must be a Route 53 hosted zone id (Z...), got ${hostedZoneId}`);
    }
    if (hostedZoneName !== undefined) {
      const zone = hostedZoneName.replace(/\.$/, '');
      if (domain.domainName !== zone && !domain.domainName.endsWith(`.${zone}`)) {
        throw new Error(`${option}: ${domain.domainName} is not in the hosted zone ${hostedZoneName}`);
      }
    }
  }
  if (props.linkDomain && props.linkDomain.domainName === props.apiDomain?.domainName) {
    throw new Error(
      `linkDomain and apiDomain are both ${props.linkDomain.domainName}; give the API a name of its own or leave apiDomain unset`,
    );
  }
  return named;
}

/** CloudFront takes certificates from us-east-1 only; any other region fails at deploy, so it fails here. */
function certificateArnOf(arn: string): string {
  if (!/^arn:aws:acm:us-east-1:\d{12}:certificate\/[0-9a-f-]{36}$/.test(arn)) {
    throw new Error(
      `certificateArn must be an ACM certificate in us-east-1 (arn:aws:acm:us-east-1:<account>:certificate/<id>), got ${arn}`,
    );
  }
  return arn;
}

/** CloudFront takes WAFv2 web ACLs of CLOUDFRONT scope, which live in us-east-1 under global/. */
function webAclArnOf(arn: string): string {
  if (!/^arn:aws:wafv2:us-east-1:\d{12}:global\/webacl\/[A-Za-z0-9_-]{1,128}\/[0-9a-f-]{36}$/.test(arn)) {
    throw new Error(
      `webAclArn must be a CloudFront-scope WAF web ACL (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>), got ${arn}`,
    );
  }
  return arn;
}

const PRICE_CLASSES: Record<PriceClass, cloudfront.PriceClass> = {
  PriceClass_100: cloudfront.PriceClass.PRICE_CLASS_100,
  PriceClass_200: cloudfront.PriceClass.PRICE_CLASS_200,
  PriceClass_All: cloudfront.PriceClass.PRICE_CLASS_ALL,
};

function priceClassOf(priceClass: PriceClass): cloudfront.PriceClass {
  const known = PRICE_CLASSES[priceClass];
  if (!known) throw new Error(`priceClass must be one of ${Object.keys(PRICE_CLASSES).join(', ')}, got ${String(priceClass)}`);
  return known;
}
