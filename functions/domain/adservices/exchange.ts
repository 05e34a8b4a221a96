import { type AdServicesAnswer, answerOf } from './answers';

/**
 * Exchanging a token with Apple's attribution API (docs/ios.md, section 4), as Apple documents:
 * 404 means the attribution is not ready yet and 5xx a fault on Apple's side, so both (and a
 * request that got no answer) are asked again, `retries` times, `delayMs` apart; 400 is a token
 * Apple will never take. Nothing here logs or throws the token.
 */

/** Apple's attribution API (functions/adapters/adservices-api.ts): POST of the token as text/plain. */
export interface AdServicesApi {
  /** Apple's status and parsed JSON body (undefined when not JSON); throws when no answer came (network, timeout). */
  post(token: string): Promise<{ readonly status: number; readonly body: unknown }>;
}

export interface ExchangeOptions {
  /** Requests after the first, at most. */
  readonly retries: number;
  readonly delayMs: number;
  /** Waits between attempts: injected, so tests do not wait. */
  readonly sleep: (ms: number) => Promise<void>;
}

/** Apple's guidance: a few retries, about 5 seconds apart. */
export const APPLE_RETRIES: Pick<ExchangeOptions, 'retries' | 'delayMs'> = { retries: 3, delayMs: 5_000 };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function exchangeToken(api: AdServicesApi, token: string, options: ExchangeOptions): Promise<AdServicesAnswer> {
  for (let attempt = 0; ; attempt++) {
    let status: number | undefined;
    try {
      const answer = await api.post(token);
      status = answer.status;
      if (status === 200) return answerOf(answer.body);
      if (status === 400) return { outcome: 'bad_token' };
    } catch {
      // No answer: retried like a 5xx.
    }
    const retried = status === undefined || status === 404 || status >= 500;
    if (!retried || attempt >= options.retries) return { outcome: 'unavailable' };
    await options.sleep(options.delayMs);
  }
}
