import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ServiceError } from '../../../functions/domain/common/errors';
import { corsAnswers, preflight } from '../../../functions/shared/cors';
import type { HttpResult } from '../../../functions/shared/http';

const SHOP = 'https://shop.example.com';
const APP_KEY = `app_live_${'a'.repeat(32)}`;

const event = (path: string, headers: Record<string, string>) =>
  ({ rawPath: path, headers, requestContext: { http: { method: 'OPTIONS', path } } }) as unknown as APIGatewayProxyEventV2;

describe('the CORS preflight', () => {
  const index = (listed: string[]) => {
    const asked: string[] = [];
    return {
      asked,
      isListed: async (origin: string) => {
        asked.push(origin);
        return listed.includes(origin);
      },
    };
  };

  it('allows a listed origin on an SDK route, as the browser sends it', async () => {
    const origins = index([SHOP]);
    const answer = await preflight(event('/sdk/v1/attribution', { origin: 'https://Shop.Example.com:443' }), origins);
    expect(answer.statusCode).toBe(204);
    expect(answer.headers?.['access-control-allow-origin']).toBe(SHOP);
    expect(origins.asked).toEqual([SHOP]);
  });

  it.each([
    ['an unlisted origin', '/event', 'https://evil.example.com'],
    ['a route browsers may not call', '/api/v1/reports/events', SHOP],
    ['the null origin', '/event', 'null'],
    ['no origin', '/event', undefined],
  ])('refuses %s 403 origin_not_allowed, with no CORS header', async (_, path, origin) => {
    const refusal = await preflight(event(path, origin === undefined ? {} : { origin }), index([SHOP])).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ServiceError);
    expect({ status: (refusal as ServiceError).statusCode, code: (refusal as ServiceError).code }).toEqual({
      status: 403,
      code: 'origin_not_allowed',
    });
    expect(Object.keys((refusal as ServiceError).headers)).toEqual(['vary']);
  });
});

describe("the SDK routes' answers", () => {
  const apps = { appByKey: async (key: string) => (key === APP_KEY ? { web_origins: [SHOP] } : undefined) };
  const answered = async (headers: Record<string, string>, options: { checked?: boolean; lookup?: typeof apps } = {}) => {
    const middleware = corsAnswers(options.lookup ?? apps);
    const request = {
      event: event('/event', headers),
      response: { statusCode: 200, headers: { 'content-type': 'application/json' } } as HttpResult,
    };
    // Middy's request carries the context and internals too, which the middleware does not read.
    const asMiddy = request as unknown as Parameters<NonNullable<typeof middleware.after>>[0];
    if (options.checked !== false) await middleware.before?.(asMiddy);
    await middleware.after?.(asMiddy);
    return request.response.headers ?? {};
  };

  it("carries Access-Control-Allow-Origin for the app's own origin", async () => {
    expect(await answered({ origin: SHOP, 'x-service-app-key': APP_KEY })).toMatchObject({
      'access-control-allow-origin': SHOP,
      vary: 'Origin',
    });
  });

  it("leaves it out for another origin, another app's keys, a failed look-up and a request the origin check refused", async () => {
    const failing = { appByKey: async () => Promise.reject(new Error('throttled')) };
    for (const headers of [
      await answered({ origin: 'https://evil.example.com', 'x-service-app-key': APP_KEY }),
      await answered({ origin: SHOP, 'x-service-app-key': `app_live_${'b'.repeat(32)}` }),
      await answered({ origin: SHOP, 'x-service-app-key': 'made up' }),
      await answered({ origin: SHOP, 'x-service-app-key': APP_KEY }, { lookup: failing }),
    ]) {
      expect(headers).not.toHaveProperty('access-control-allow-origin');
      expect(headers.vary).toBe('Origin');
    }
    expect(await answered({ origin: SHOP, 'x-service-app-key': APP_KEY }, { checked: false })).toEqual({
      'content-type': 'application/json',
    });
  });

  it('leaves a request without an Origin (a server, an app) as it was', async () => {
    expect(await answered({ 'x-service-app-key': APP_KEY })).toEqual({ 'content-type': 'application/json' });
  });
});
