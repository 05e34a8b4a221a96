import type { AdServicesApi } from '../domain/adservices/exchange';

/** Apple answers in well under a second; a request that takes longer is retried like a 5xx. */
const REQUEST_TIMEOUT_MS = 5_000;

/**
 * Apple's attribution API (https://api-adservices.apple.com/api/v1/ in AWS; ADSERVICES_API_URL,
 * lib/manifest.ts): the token POSTed as text/plain, the answer JSON. An error thrown here names
 * neither the token nor the answer: it may reach a log line.
 */
export function adServicesApi(url: string): AdServicesApi {
  return {
    post: async (token) => {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: token,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        throw new Error(`Apple's attribution API did not answer (${(error as Error).name})`);
      }
      const text = await response.text().catch(() => '');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, body };
    },
  };
}
