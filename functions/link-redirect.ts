import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { ClickLogWriter } from './adapters/click-store';
import { IpBlockStore } from './adapters/ip-block-store';
import { CachedLinks, LinkStore } from './adapters/link-store';
import { RateLimitStore } from './adapters/rate-limit-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import { ServiceError } from './domain/common/errors';
import { newClickId } from './domain/links/click-log-key';
import { linkIdFromPath } from './domain/links/link-path';
import { slidingWindow } from './domain/links/sliding-window';
import { followLink, type LinkOutcome, type TrackingLinkPorts } from './domain/links/tracking-link';
import { intEnv, resourceName } from './shared/config';
import { type HttpEvent, type HttpResult, header, httpHandler } from './shared/http';
import { logger, metrics } from './shared/observability';
import { viewerOf } from './shared/viewer';

// The app's time zone, for the click's local day (count_day), by which the click is counted: cached as every hot-path tenant look-up.
const tenants = new CachedTenants(new TenantStore(resourceName.table('tenants')));

const ports: TrackingLinkPorts = {
  links: new CachedLinks(new LinkStore(resourceName.table('links')), intEnv('LINK_CACHE_TTL_MS', 30_000)),
  ipBlocks: new IpBlockStore(resourceName.table('ip_blocks')),
  rateCounter: new RateLimitStore(resourceName.table('rate_limits')),
  // docs/tracking-links.md: 120 clicks per 60 s per IPv4 /24 or IPv6 /48 unless configured otherwise.
  rateWindow: slidingWindow(intEnv('LINK_RATE_LIMIT', 120), intEnv('LINK_RATE_WINDOW_SECONDS', 60) * 1000),
  clicks: new ClickLogWriter(resourceName.table('click_log')),
  // Each click carries its local day; the lane sweep counts it from the click log (ADR 0008).
  countClicks: true,
  timeZoneOf: (appId) => tenants.appTimeZone(appId),
  newClickId,
};

/** Redirects and their errors are per visitor and per moment: nothing may cache them. */
const NO_STORE = { 'cache-control': 'no-store' };
/** A failed link look-up is usually a throttled or briefly unreachable table: worth a quick retry. */
const LINK_RETRY_AFTER_SECONDS = 5;

/**
 * GET /l/{link_id}: the tracking-link redirect (functions/domain/links/tracking-link.ts has the rules).
 * The client address, country and ASN come only from viewerOf(), i.e. from CloudFront.
 */
export async function linkRedirect(event: HttpEvent): Promise<HttpResult> {
  // CloudFront's /l/* behavior passes GET and HEAD (refusing the rest itself): a HEAD is answered
  // as the GET would be, as HTTP has it, and is never a click (followLink drops it: head_request).
  const outcome = await followLink(ports, {
    linkId: linkIdOf(event),
    method: event.requestContext?.http?.method === 'HEAD' ? 'HEAD' : 'GET',
    userAgent: header(event, 'user-agent') ?? '',
    viewer: viewerOf(event),
    query: event.queryStringParameters ?? {},
    nowMs: Date.now(),
  });
  count(outcome);
  switch (outcome.kind) {
    case 'unknown_link':
      throw new ServiceError(404, 'unknown_link', NO_STORE);
    case 'rate_limited':
      throw new ServiceError(429, 'rate_limited', { ...NO_STORE, 'retry-after': String(outcome.retryAfterSeconds) });
    case 'link_unavailable':
      throw new ServiceError(503, 'service_unavailable', { ...NO_STORE, 'retry-after': String(LINK_RETRY_AFTER_SECONDS) });
    case 'redirect':
      return { statusCode: 302, headers: { ...NO_STORE, location: outcome.location } };
  }
}

/**
 * The link id: an event of the HTTP API's route (the local runtime could send one) carries it as
 * its path parameter; the function URL's event (issue 41) only in its raw path.
 */
export function linkIdOf(event: HttpEvent): string {
  return event.pathParameters?.link_id ?? linkIdFromPath(event.rawPath ?? '');
}

/**
 * One metric per request, by outcome; drops carry their reason as a dimension (ClickDropped by
 * reason). A request emits one metric by outcome (a recorded click without its local day, which is
 * then not counted, adds ClickCountFailed, and has no dimension), so the dimension can sit on the shared metrics object:
 * it is cleared when the middleware flushes at the end of the invocation.
 */
function count(outcome: LinkOutcome): void {
  if (outcome.kind === 'redirect' && outcome.dropped) metrics.addDimension('reason', outcome.dropped);
  metrics.addMetric(metricName(outcome), MetricUnit.Count, 1);
  if (outcome.kind === 'unknown_link' && outcome.honeypotHit) logger.info('honeypot hit: source address blocked');
  if (outcome.kind === 'redirect' && outcome.countFailure !== undefined) {
    // The visitor was redirected and the click recorded; only the click counts miss it.
    metrics.addMetric('ClickCountFailed', MetricUnit.Count, 1);
    logger.error('click recorded without its local day: not counted', { error: outcome.countFailure as Error });
  }
  if (outcome.kind === 'link_unavailable') {
    logger.error('link look-up failed; visitor asked to retry', { error: outcome.failure as Error });
  } else if ('failure' in outcome && outcome.failure !== undefined) {
    logger.error('link store failed; visitor redirected without a click', { error: outcome.failure as Error });
  }
}

function metricName(outcome: LinkOutcome): string {
  switch (outcome.kind) {
    case 'redirect':
      return outcome.dropped ? 'ClickDropped' : 'ClickRecorded';
    case 'rate_limited':
      return 'ClickRateLimited';
    case 'link_unavailable':
      return 'LinkLookupFailed';
    case 'unknown_link':
      return outcome.honeypotHit ? 'HoneypotHit' : 'UnknownLink';
  }
}

export const handler = httpHandler(linkRedirect);
