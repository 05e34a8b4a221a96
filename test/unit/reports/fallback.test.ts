import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { handler } from '../../../functions/fallback';
import { fromCloudFront } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';

// The handlers read CloudFront's origin secret from Secrets Manager before anything else.
mockOriginSecret();

const call = async (method: string, path: string) => {
  const event = {
    rawPath: path,
    headers: fromCloudFront(),
    requestContext: { http: { method, path } },
  } as unknown as APIGatewayProxyEventV2;
  const result = (await handler(event, { functionName: 'fallback', awsRequestId: 'r' } as Context)) as { statusCode: number; body: string };
  return { status: result.statusCode, body: JSON.parse(result.body) as unknown };
};

describe('the fallback route', () => {
  it.each(['attribution', 'revenue', 'cohorts', 'events'])('answers a non-GET on the %s report with 405', async (name) => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      expect(await call(method, `/api/v1/reports/${name}`)).toEqual({ status: 405, body: { error: 'method_not_allowed' } });
    }
  });

  it('answers any path under the prefix that names no report with 404 unknown_report', async () => {
    for (const path of ['/api/v1/reports/nope', '/api/v1/reports', '/api/v1/reports/attribution/x', '/api/v1/reports/Attribution']) {
      expect(await call('GET', path)).toEqual({ status: 404, body: { error: 'unknown_report' } });
    }
    expect(await call('POST', '/api/v1/reports/nope')).toEqual({ status: 404, body: { error: 'unknown_report' } });
  });

  it('answers any other path with a JSON 404', async () => {
    expect(await call('GET', '/api/v1/reportsx')).toEqual({ status: 404, body: { error: 'not_found' } });
    expect(await call('PUT', '/')).toEqual({ status: 404, body: { error: 'not_found' } });
  });
});
