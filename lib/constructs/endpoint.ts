import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Construct } from 'constructs';
import type { Edge } from './edge';
import { ManifestFunction, type ManifestFunctionProps } from './manifest-function';

export interface EndpointProps extends ManifestFunctionProps {
  readonly edge: Edge;
}

/**
 * A routed function of the manifest: the function with its grants and alarms, the origin secret's
 * ARN and the right to read it, one Lambda integration (payload format 2.0), and one API Gateway
 * route per route key of the manifest, each with the manifest's throttle (the route's own, or its function's) when it has one.
 * A `functionUrl` function has no integration nor route: CloudFront reaches it through its URL (Edge.serveFromFunctionUrl).
 */
export class Endpoint extends ManifestFunction {
  readonly routes: apigw.HttpRoute[];

  constructor(scope: Construct, id: string, props: EndpointProps) {
    super(scope, id, props);
    // Every request is checked against the origin secret before anything else (functions/shared/http.ts).
    this.function.bindOriginSecret(props.edge.originSecret);
    if (props.spec.functionUrl) {
      // CloudFront calls the function URL; the HTTP API has none of these routes (issue 41), so an
      // API Gateway throttle would limit nothing: refused rather than silently ignored.
      if (props.spec.throttle || props.spec.routeThrottles) {
        throw new Error(`${props.name}: a functionUrl function has no API Gateway route to throttle (docs/tracking-links.md)`);
      }
      for (const route of props.spec.routes ?? []) props.edge.serveFromFunctionUrl(this.function, route);
      this.routes = [];
      return;
    }
    const integration = new HttpLambdaIntegration('Integration', this.function, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    });
    this.routes = (props.spec.routes ?? []).map((route) => {
      const httpRoute = new apigw.HttpRoute(this, routeId(route), {
        httpApi: props.edge.api,
        routeKey: routeKeyOf(route),
        integration,
        // The origin check at API Gateway (Edge.authorizeWith); the service's own authentication
        // (HMAC-signed keys, bearer server keys) stays in the handlers, as the interface specifies.
        authorizer: props.edge.authorizer,
      });
      const throttle = props.spec.routeThrottles?.[route] ?? props.spec.throttle;
      if (throttle) props.edge.throttleRoute(httpRoute, route, throttle);
      return httpRoute;
    });
  }
}

/** A manifest route key ("GET /l/{link_id}", "ANY /api/v1/reports/{proxy+}", "$default") as API Gateway's. */
export function routeKeyOf(route: string): apigw.HttpRouteKey {
  if (route === '$default') return apigw.HttpRouteKey.DEFAULT;
  const [, verb, path] = /^([A-Z]+) (\/\S*)$/.exec(route) ?? [];
  const method = Object.values(apigw.HttpMethod).find((known) => known === verb);
  if (!method || path === undefined) throw new Error(`route "${route}" is neither "$default" nor "<METHOD> /path"`);
  return apigw.HttpRouteKey.with(path, method);
}

/** Construct ids cannot contain "/": "GET /l/{link_id}" becomes "Route GET l link_id". */
function routeId(route: string): string {
  return `Route ${route.replace(/[^A-Za-z0-9_$]+/g, ' ').trim()}`;
}
