import { ServiceError } from './domain/common/errors';
import { isReportRoute, REPORTS_PREFIX } from './domain/reports/reports';
import { type HttpEvent, type HttpResult, httpHandler } from './shared/http';

/**
 * Everything no other route takes. Under the reports prefix: a known report with a method other
 * than GET is 405, any other name is 404 unknown_report. Both are decided before authentication,
 * so probing never reveals whether a key is valid. Any other path is a JSON 404 too.
 */
export async function fallback(event: HttpEvent): Promise<HttpResult> {
  const path = event.rawPath ?? event.requestContext.http.path;
  const method = event.requestContext.http.method.toUpperCase();
  if (path === REPORTS_PREFIX || path.startsWith(`${REPORTS_PREFIX}/`)) {
    const name = path.slice(REPORTS_PREFIX.length + 1);
    if (isReportRoute(name) && method !== 'GET') throw new ServiceError(405, 'method_not_allowed', { allow: 'GET' });
    throw new ServiceError(404, 'unknown_report');
  }
  throw new ServiceError(404, 'not_found');
}

export const handler = httpHandler(fallback, { emitsMetrics: false });
