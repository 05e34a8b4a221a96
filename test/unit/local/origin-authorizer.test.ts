import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { authorizeOrigin } from '../../../functions/origin-authorizer';
import { envName, functions, originVerifyHeader } from '../../../lib/manifest';
import { authorizerFromManifest } from '../../../local/api-gateway';
import { TEST_ORIGIN_SECRET, TEST_ORIGIN_SECRET_ARN } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';

const secrets = mockOriginSecret();
const CACHE_MS = functions['origin-authorizer'].authorizer.cacheSeconds * 1000;

const event = (headers: Record<string, string>) =>
  ({
    headers,
    rawPath: '/health',
    routeKey: 'GET /health',
    requestContext: { apiId: 'local', stage: '$default', http: { method: 'GET', path: '/health' } },
  }) as unknown as APIGatewayProxyEventV2;

describe('the origin authorizer function', () => {
  beforeEach(() => {
    process.env[envName.originVerifySecretArn()] = TEST_ORIGIN_SECRET_ARN;
  });

  it('authorizes the origin secret and nothing else', async () => {
    expect(await authorizeOrigin({ headers: { [originVerifyHeader]: TEST_ORIGIN_SECRET } })).toEqual({ isAuthorized: true });
    expect(await authorizeOrigin({ headers: { [originVerifyHeader]: `${TEST_ORIGIN_SECRET}x` } })).toEqual({ isAuthorized: false });
    expect(await authorizeOrigin({ headers: {} })).toEqual({ isAuthorized: false });
  });

  it('fails closed, throwing, without the secret ARN', async () => {
    delete process.env[envName.originVerifySecretArn()];
    secrets.resetHistory();
    await expect(authorizeOrigin({ headers: { [originVerifyHeader]: TEST_ORIGIN_SECRET } })).rejects.toThrow(/not set/);
    expect(secrets.calls()).toHaveLength(0);
  });
});

describe('the local API Gateway authorizer', () => {
  const setUp = (answer: (value: string | undefined) => unknown) => {
    let now = 1_000_000;
    const calls: string[] = [];
    const invoke = async (name: string, request: unknown) => {
      const value = (request as { identitySource: string[] }).identitySource[0];
      calls.push(`${name}:${value}`);
      return answer(value);
    };
    const authorize = authorizerFromManifest(invoke, () => now);
    return { authorize, calls, advance: (ms: number) => (now += ms) };
  };

  it('answers 401 without invoking anything when the header is missing or empty', async () => {
    const { authorize, calls } = setUp(() => ({ isAuthorized: true }));
    expect(await authorize(event({}))).toEqual({ statusCode: 401, body: { message: 'Unauthorized' } });
    expect(await authorize(event({ [originVerifyHeader]: '' }))).toEqual({ statusCode: 401, body: { message: 'Unauthorized' } });
    expect(calls).toEqual([]);
  });

  it("keeps each value's answer for the manifest's cache time, then asks again", async () => {
    const { authorize, calls, advance } = setUp((value) => ({ isAuthorized: value === 'right' }));
    expect(await authorize(event({ [originVerifyHeader]: 'wrong' }))).toEqual({ statusCode: 403, body: { message: 'Forbidden' } });
    expect(await authorize(event({ [originVerifyHeader]: 'right' }))).toBeUndefined();
    advance(CACHE_MS - 1);
    expect(await authorize(event({ [originVerifyHeader]: 'wrong' }))).toEqual({ statusCode: 403, body: { message: 'Forbidden' } });
    expect(await authorize(event({ [originVerifyHeader]: 'right' }))).toBeUndefined();
    expect(calls).toEqual(['origin-authorizer:wrong', 'origin-authorizer:right']);
    advance(1);
    await authorize(event({ [originVerifyHeader]: 'right' }));
    expect(calls).toEqual(['origin-authorizer:wrong', 'origin-authorizer:right', 'origin-authorizer:right']);
  });

  it('refuses an answer that is not exactly isAuthorized true, and lets a failing authorizer throw (API Gateway: 500)', async () => {
    for (const answer of [{ isAuthorized: 'true' }, {}, null, 'yes']) {
      expect(await setUp(() => answer).authorize(event({ [originVerifyHeader]: 'v' }))).toMatchObject({ statusCode: 403 });
    }
    const failing = setUp(() => {
      throw new Error('secret unreadable');
    });
    await expect(failing.authorize(event({ [originVerifyHeader]: 'v' }))).rejects.toThrow('secret unreadable');
  });
});
