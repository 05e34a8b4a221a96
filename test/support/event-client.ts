import { EventClient } from '../../client/event-client';
import type { Tenant } from './local-stack';

/**
 * The typed client of a tenant's app, sending from a chosen address: the local edge takes it from
 * X-Forwarded-For under TRUST_PROXY, as CloudFront's viewer address in AWS. Attribution reads the
 * install's address (probabilistic matches, honeypot blocks), so tests choose it.
 */
export function eventClientFrom(baseUrl: string, tenant: Tenant, ip: string): EventClient {
  return new EventClient({
    baseUrl,
    companyKey: tenant.company.company_key,
    appKey: tenant.app.app_key,
    signingSecret: tenant.app.signing_secret,
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-forwarded-for', ip);
      return fetch(input, { ...init, headers });
    },
  });
}
