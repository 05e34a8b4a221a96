import type { NetworkPort } from '@attribution/sdk-core';

/**
 * Chromium and Safari refuse a keepalive request once the keepalive bodies in flight pass 64 KiB;
 * one batch at a time stays under it with room for a first-launch call.
 */
export const KEEPALIVE_MAX_BYTES = 60 * 1024;

/**
 * The core's network port on fetch: no cookies (the service wants none, and CORS allows none),
 * a timeout by AbortSignal, and `keepalive` while the page is being hidden or unloaded so the
 * batch sent then outlives the page. A rejected keepalive (over the budget) is a network failure
 * the core retries, and the events stay queued.
 */
export function fetchNetwork(hiding: () => boolean): NetworkPort {
  return async (request) => {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body as RequestInit['body'],
      credentials: 'omit',
      keepalive: hiding() && (request.body?.byteLength ?? 0) <= KEEPALIVE_MAX_BYTES,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    return {
      status: response.status,
      headers: { 'retry-after': response.headers.get('retry-after') ?? undefined },
      body: await response.text(),
    };
  };
}
