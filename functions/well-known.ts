import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { viewerHostHeader } from '../lib/function-constants';
import { CachedLinkDomains, LinkDomainStore } from './adapters/link-domain-store';
import { ServiceError } from './domain/common/errors';
import { WELL_KNOWN_CACHE_CONTROL, wellKnownFile } from './domain/links/app-links';
import { resourceName } from './shared/config';
import { type HttpEvent, type HttpResult, header, httpHandler } from './shared/http';
import { logger, metrics } from './shared/observability';

// One GetItem per domain, cached as every hot-path tenant look-up (unknown hosts for less).
const domains = new CachedLinkDomains(new LinkDomainStore(resourceName.table('tenants')));

/** A failed read is usually a throttled or briefly unreachable table: Apple's CDN and Android retry. */
const RETRY_AFTER_SECONDS = 5;

/**
 * GET /.well-known/apple-app-site-association and GET /.well-known/assetlinks.json: the file the
 * request's link domain serves for the apps configured on it (functions/domain/links/app-links.ts).
 * The domain is the viewer's Host, which the edge passes in x-viewer-host (lib/constructs/edge.ts).
 * 200 application/json with no redirect, as Apple and Google require, or 404 not_found; 503
 * service_unavailable with Retry-After when the store cannot be read.
 */
export async function wellKnown(event: HttpEvent): Promise<HttpResult> {
  let body: string | undefined;
  try {
    body = await wellKnownFile(domains, header(event, viewerHostHeader), event.rawPath ?? event.requestContext.http.path);
  } catch (failure) {
    metrics.addMetric('WellKnownLookupFailed', MetricUnit.Count, 1);
    logger.error('link domain look-up failed; asked to retry', { error: failure as Error });
    throw new ServiceError(503, 'service_unavailable', { 'cache-control': 'no-store', 'retry-after': String(RETRY_AFTER_SECONDS) });
  }
  if (body === undefined) {
    metrics.addMetric('WellKnownNotFound', MetricUnit.Count, 1);
    // Not cached, so a domain configured a moment later is served at once.
    throw new ServiceError(404, 'not_found', { 'cache-control': 'no-store' });
  }
  metrics.addMetric('WellKnownServed', MetricUnit.Count, 1);
  return { statusCode: 200, headers: { 'content-type': 'application/json', 'cache-control': WELL_KNOWN_CACHE_CONTROL }, body };
}

export const handler = httpHandler(wellKnown);
