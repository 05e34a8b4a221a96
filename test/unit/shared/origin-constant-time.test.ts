import { createHash, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { fromEdge } from '../../../functions/shared/viewer';
import { originVerifyHeader } from '../../../lib/manifest';

/**
 * The origin secret is compared in constant time: no early exit on the first differing character
 * or on a length mismatch, so timing tells a caller neither how close a guess was nor how long the
 * secret is. Timing itself is too noisy to assert on; what is asserted is the mechanism, every
 * guess going through crypto.timingSafeEqual over two SHA-256 digests of the same length.
 */
jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, timingSafeEqual: jest.fn(actual.timingSafeEqual) };
});
const compare = jest.mocked(timingSafeEqual);

const SECRET = 'origin-secret-of-forty-characters-000000';
const event = (sent: string) => ({ headers: { [originVerifyHeader]: sent } }) as unknown as APIGatewayProxyEventV2;

describe('the origin check', () => {
  it('compares every header sent with the secret by timingSafeEqual over two 32-byte digests, whatever its length', () => {
    const guesses = ['', 'o', SECRET.slice(0, -1), `${SECRET}0`, SECRET.replace(/0$/, '1'), 'x'.repeat(1000), SECRET];
    const verdicts = guesses.map((sent) => fromEdge(event(sent), SECRET));

    expect(verdicts).toEqual([false, false, false, false, false, false, true]);
    expect(compare).toHaveBeenCalledTimes(guesses.length);
    for (const [sentDigest, secretDigest] of compare.mock.calls) {
      expect([sentDigest.byteLength, secretDigest.byteLength]).toEqual([32, 32]);
      expect(secretDigest).toEqual(createHash('sha256').update(SECRET).digest());
    }
  });
});
