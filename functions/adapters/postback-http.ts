import { lookup } from 'node:dns/promises';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { DeliveryPorts } from '../domain/partner-postbacks/deliver';
import type { Resolve } from '../domain/partner-postbacks/destination';

/** Every address of a name, as the operating system's resolver gives them. */
export const resolveHost: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/**
 * One postback request to the address destination.ts checked: the socket's lookup is replaced by
 * one that returns that address, so nothing resolves the name again between the check and the
 * connection, while the Host header and the TLS server name (and certificate check) stay the
 * URL's host. Redirects are never followed (node:http does not), and the whole exchange has a
 * deadline. The body is read and dropped: only the status matters.
 */
export const sendPostback: DeliveryPorts['send'] = ({ url, address, method, body, timeoutMs }) =>
  new Promise((resolve, reject) => {
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: address.address, family: address.family },
        ]);
      else callback(null, address.address, address.family);
    };
    const options: RequestOptions = {
      method,
      lookup: pinned,
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        'user-agent': 'attribution-service-postbacks/1',
        ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
      },
    };
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
