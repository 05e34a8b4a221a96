/**
 * A stand-in for Apple's attribution API (https://api-adservices.apple.com/api/v1/) on 127.0.0.1:
 * `npm start` runs it and points adservices-enrich's ADSERVICES_API_URL at it (RuntimeOptions.internet),
 * since the local runtime never reaches the internet; tests and the simulator run it the same way.
 *
 * It answers a POST of a token (text/plain) by what the token says:
 *
 * | token | answer |
 * |---|---|
 * | `stub-true-<campaignId>-<clickMs>` | 200, `attribution: true`, campaign `<campaignId>`, clickDate `<clickMs>` (ISO 8601) |
 * | `stub-false` | 200, `attribution: false` |
 * | `stub-400` | 400 (a bad token: not retried) |
 * | `stub-404x<n>-<token>` | 404 (not ready) to the first `n` requests of this token, then as `<token>` |
 * | `stub-500x<n>-<token>` | 500 to the first `n` requests of this token, then as `<token>` |
 * | anything else | 400 |
 *
 * With `attribution: true` the other ids follow from the campaign id: adGroupId = campaignId + 1,
 * keywordId = campaignId + 2, adId = campaignId + 3, orgId 1234567, countryOrRegion `US`,
 * conversionType `Download`. (Apple gives clickDate to the minute; the stub to the millisecond, so
 * tests can order an Apple Ads click against a tracking-link click exactly.) docs/ios.md, section 4.
 *
 * `GET /requests` answers `{"total": n}`: the POSTs received, so a check can tell that a redelivery
 * asked Apple no more.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AdServicesStub {
  /** What ADSERVICES_API_URL is set to. */
  readonly url: string;
  /** POSTs received, in all and for one token. */
  requests(token?: string): number;
  close(): Promise<void>;
}

export const STUB_ORG_ID = 1234567;

/** Apple's 200 body for a token of the convention, or the status it answers instead. */
export function stubAnswer(token: string, seen: number): { status: number; body?: unknown } {
  const retried = /^stub-(404|500)x(\d+)-(.+)$/.exec(token);
  if (retried) {
    const [, status, times, rest] = retried;
    return seen <= Number(times) ? { status: Number(status) } : stubAnswer(rest ?? '', seen - Number(times));
  }
  if (token === 'stub-false') return { status: 200, body: { attribution: false } };
  const claimed = /^stub-true-(\d+)-(\d+)$/.exec(token);
  if (claimed) {
    const campaignId = Number(claimed[1]);
    return {
      status: 200,
      body: {
        attribution: true,
        orgId: STUB_ORG_ID,
        campaignId,
        conversionType: 'Download',
        clickDate: new Date(Number(claimed[2])).toISOString(),
        adGroupId: campaignId + 1,
        countryOrRegion: 'US',
        keywordId: campaignId + 2,
        adId: campaignId + 3,
      },
    };
  }
  return { status: 400 };
}

export async function startAdServicesStub(host = '127.0.0.1'): Promise<AdServicesStub> {
  const perToken = new Map<string, number>();
  let total = 0;
  const server: Server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/requests') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ total }));
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const token = Buffer.concat(chunks).toString('utf8').trim();
      total++;
      const seen = (perToken.get(token) ?? 0) + 1;
      perToken.set(token, seen);
      const { status, body } = stubAnswer(token, seen);
      if (body === undefined) response.writeHead(status).end();
      else response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/api/v1/`,
    requests: (token) => (token === undefined ? total : (perToken.get(token) ?? 0)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
