import type { MiddlewareObj } from '@middy/core';
import { ServiceError } from '../domain/common/errors';
import { APP_KEY_PATTERN } from '../domain/tenants/keys';
import { answerHeaders, isCorsPath, listsOrigin, preflightHeaders, webOriginOf } from '../domain/tenants/web-origins';
import { type HttpEvent, type HttpResult, header } from './http';

/**
 * CORS for the routes browsers call (docs/sdk.md, "CORS"): POST /event, POST /privacy/delete and
 * /sdk/v1/*. Two halves, because a preflight carries no keys and an answer does:
 *
 * - preflight (OPTIONS, functions/cors-preflight.ts): allowed when any app lists the Origin (the
 *   global index, WebOriginStore), refused 403 origin_not_allowed with no CORS header otherwise;
 * - answers (corsAnswers, on each of those routes): Access-Control-Allow-Origin only when the app
 *   whose key the request carries lists the Origin. A page of another app's origin passes the
 *   preflight but cannot read, so cannot use, an answer made with keys that are not its app's.
 */

export interface OriginIndex {
  isListed(origin: string): Promise<boolean>;
}

/** The preflight's answer: 204 with the CORS headers for a listed origin on a CORS path, else 403 origin_not_allowed. */
export async function preflight(event: HttpEvent, index: OriginIndex): Promise<HttpResult> {
  const origin = webOriginOf(header(event, 'origin') ?? '');
  const path = event.rawPath ?? event.requestContext.http.path;
  if (origin === undefined || !isCorsPath(path) || !(await index.isListed(origin))) {
    throw new ServiceError(403, 'origin_not_allowed', { vary: 'Origin' });
  }
  return { statusCode: 204, headers: preflightHeaders(origin) };
}

export interface AppOrigins {
  appByKey(appKey: string): Promise<{ readonly web_origins?: readonly string[] } | undefined>;
}

/**
 * Adds Access-Control-Allow-Origin to an answer (a refusal too, so the SDK can read a 401 or a
 * 429) when the request's app lists its Origin. Requests without an Origin (servers, apps) cost
 * nothing; a browser's costs the app look-up authentication made already, cached. Only requests
 * the origin check let through are touched: its 403 stays bare.
 */
export function corsAnswers(apps: AppOrigins): MiddlewareObj<HttpEvent, HttpResult> {
  const checked = new WeakSet<HttpEvent>();
  const decorate = async (request: { event: HttpEvent; response: HttpResult | undefined | null }) => {
    const origin = header(request.event, 'origin');
    if (origin === undefined || !request.response || !checked.has(request.event)) return;
    const appKey = header(request.event, 'x-service-app-key') ?? '';
    // A failed look-up leaves the answer without the header: the SDK retries it as a network failure.
    const app = APP_KEY_PATTERN.test(appKey) ? await apps.appByKey(appKey).catch(() => undefined) : undefined;
    const allowed = app && listsOrigin(app, origin);
    request.response = {
      ...request.response,
      headers: { ...request.response.headers, ...(allowed ? answerHeaders(allowed) : { vary: 'Origin' }) },
    };
  };
  return {
    before: async (request) => {
      checked.add(request.event);
    },
    after: decorate,
    onError: decorate,
  };
}
