import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { ClickStore } from './adapters/click-store';
import { FirstLaunchAnswers } from './adapters/first-launch-store';
import { DynamoInstallStore } from './adapters/install-store';
import { SigningSecretStore } from './adapters/signing-secret-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import {
  answerFirstLaunch,
  currentAttribution,
  FirstLaunchError,
  type FirstLaunchPorts,
  parseFirstLaunch,
  parseInstallQuery,
} from './domain/attribution/first-launch';
import { authenticate } from './domain/ingest/event-auth';
import { probabilisticAllowed } from './domain/privacy/probabilistic-basis';
import type { App, Company } from './domain/tenants/tenant';
import { clickTables } from './shared/click-tables';
import { resourceName } from './shared/config';
import { corsAnswers } from './shared/cors';
import { eventApi, eventCredentials, readEventRequest } from './shared/event-request';
import { type HttpEvent, type HttpResult, httpHandler, json, rawBody } from './shared/http';
import { metrics } from './shared/observability';
import { viewerOf } from './shared/viewer';

const tenants = new CachedTenants(
  new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets'))),
);
const clicks = new ClickStore(clickTables());
const ports: FirstLaunchPorts = {
  // Attribution applies the lookback and the 24-hour window itself, as the aggregator's lookups do
  // (functions/adapters/attribution-lookups.ts): the store's whole-second expiry filter stays out.
  clicks: { clickById: (appId, clickId) => clicks.byId(appId, clickId, 0), latestClick: (query) => clicks.latest(query, 0) },
  answers: new FirstLaunchAnswers(new DynamoInstallStore(resourceName.table('installs'))),
};

/** The answer is the install's own, fetched with the app's keys: never kept by a shared cache. */
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * POST /sdk/v1/attribution (docs/deep-links.md, "First launch"): the event API's authentication
 * and body handling (readEventRequest), the body checked, then answerFirstLaunch with the
 * request's own address; GET /sdk/v1/attribution?install_uuid=: the three headers with the
 * signature over the empty body, as GET /sdk/v1/skan-schema, then currentAttribution. Refusals are
 * the event API's codes and FIRST_LAUNCH_ERRORS; a store that fails is 503 store_unavailable.
 */
export async function sdkAttribution(event: HttpEvent): Promise<HttpResult> {
  const receivedMs = Date.now();
  if (event.requestContext?.http?.method === 'GET') {
    const { app } = await authenticate<App, Company>(eventCredentials(event), rawBody(event), tenants, { emptyBody: 'signed' });
    const installUuid = parseInstallQuery(event.queryStringParameters?.install_uuid);
    const current = await currentAttribution(ports, app.app_id, installUuid);
    metrics.addMetric('AttributionReads', MetricUnit.Count, 1);
    return json(200, current, NO_STORE);
  }
  const { app, body } = await readEventRequest(event, tenants);
  const request = parseFirstLaunch(body);
  const answer = await answerFirstLaunch(ports, {
    appId: app.app_id,
    // The request carries no consent: under the `consent` basis a first launch is never matched
    // probabilistically (docs/privacy.md, "Probabilistic matching").
    probabilistic: probabilisticAllowed(app, undefined),
    clientIp: viewerOf(event).ip,
    receivedMs,
    request,
  });
  // Found against not found, per app over time: a drop in found is a link or SDK set up wrong.
  metrics.addMetric(answer.status === 'found' ? 'FirstLaunchFound' : 'FirstLaunchNotFound', MetricUnit.Count, 1);
  return json(200, answer, NO_STORE);
}

export const handler = httpHandler(
  eventApi(sdkAttribution, () => new FirstLaunchError('store_unavailable')),
  { cors: corsAnswers(tenants) },
);
