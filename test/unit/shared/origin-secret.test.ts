import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { ORIGIN_SECRET_CACHE_MS, originSecretValues } from '../../../functions/adapters/origin-secret';

/**
 * The origin secret as the routed functions read it (functions/adapters/origin-secret.ts): from
 * Secrets Manager, at the first request that needs it, kept five minutes, its previous value
 * accepted too while a rotation reaches CloudFront (docs/secrets.md).
 */
const secrets = mockClient(SecretsManagerClient);
const stages: Record<string, string | undefined> = {};
let failures: Error[] = [];
const notFound = () => new ResourceNotFoundException({ message: 'no such version', $metadata: {} });
let arnCount = 0;
const newArn = () => `arn:aws:secretsmanager:us-east-1:000000000000:secret:origin-${++arnCount}-abcdef`;

let now: number;
beforeEach(() => {
  secrets.reset();
  failures = [];
  secrets.on(GetSecretValueCommand).callsFake(async (input: { VersionStage: string }) => {
    const failure = failures.shift();
    if (failure) throw failure;
    const value = stages[input.VersionStage];
    if (value === undefined) throw notFound();
    return { SecretString: value };
  });
  stages.AWSCURRENT = 'first-value';
  stages.AWSPREVIOUS = undefined;
  now = Date.UTC(2026, 0, 1);
  jest.spyOn(Date, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

describe('the origin secret a routed function checks requests against', () => {
  it('is the current value alone for a secret never rotated, read once and kept five minutes', async () => {
    const arn = newArn();
    expect(await originSecretValues(arn)).toEqual(['first-value']);
    now += ORIGIN_SECRET_CACHE_MS - 1;
    expect(await originSecretValues(arn)).toEqual(['first-value']);
    // One read of each stage: AWSCURRENT, and AWSPREVIOUS, which it does not have.
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    expect(ORIGIN_SECRET_CACHE_MS).toBe(5 * 60_000);
  });

  it('takes a rotated value within five minutes and keeps accepting the previous one, which CloudFront sends until its deploy', async () => {
    const arn = newArn();
    expect(await originSecretValues(arn)).toEqual(['first-value']);
    // aws secretsmanager put-secret-value: the new value is AWSCURRENT, the old one AWSPREVIOUS.
    Object.assign(stages, { AWSCURRENT: 'second-value', AWSPREVIOUS: 'first-value' });
    expect(await originSecretValues(arn)).toEqual(['first-value']);
    now += ORIGIN_SECRET_CACHE_MS;
    expect(await originSecretValues(arn)).toEqual(['second-value', 'first-value']);
    // The next rotation retires the first value.
    Object.assign(stages, { AWSCURRENT: 'third-value', AWSPREVIOUS: 'second-value' });
    now += ORIGIN_SECRET_CACHE_MS;
    expect(await originSecretValues(arn)).toEqual(['third-value', 'second-value']);
  });

  it('shares one read between requests that arrive together', async () => {
    const arn = newArn();
    const reads = await Promise.all([originSecretValues(arn), originSecretValues(arn), originSecretValues(arn)]);
    expect(reads).toEqual([['first-value'], ['first-value'], ['first-value']]);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('keeps no failed read: the request fails, and the next one reads again', async () => {
    const arn = newArn();
    failures = [Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })];
    await expect(originSecretValues(arn)).rejects.toThrow('Rate exceeded');
    expect(await originSecretValues(arn)).toEqual(['first-value']);
  });

  it('fails, rather than accept nothing or anything, when the secret has no current value', async () => {
    stages.AWSCURRENT = undefined;
    await expect(originSecretValues(newArn())).rejects.toThrow();
  });
});
