/**
 * Companies, apps and server keys as the tenants table stores them (docs/architecture.md section 4), and the
 * plan rules a new company or app gets. The tenant store writes these; authentication, the links
 * and the aggregator read them. An app's signing secret is not among them: it is kept apart
 * (the signing_secrets table), for the functions that verify signatures alone.
 */

/** Free plan: 10,000 accepted events per calendar month (UTC) unless --monthly-cap says otherwise. */
export const FREE_PLAN_MONTHLY_CAP = 10_000;
export const DEFAULT_LOOKBACK_DAYS = 7;

export type Plan = 'free' | 'paid';

export interface Company {
  company_id: string;
  company_key: string;
  name: string;
  plan: Plan;
  /** null: no cap (paid plans unless one is set). */
  monthly_cap: number | null;
  suspended: boolean;
  created_ms: number;
}

export interface AppDestinations {
  ios_url?: string;
  android_url?: string;
  web_url?: string;
}

export interface App extends AppDestinations {
  app_id: string;
  app_key: string;
  company_id: string;
  company_key: string;
  name: string;
  probabilistic: boolean;
  lookback_days: number;
  created_ms: number;
}

/** An app with its signing secret, as `app create` and `app show` print it to the operator. */
export interface AppWithSecret extends App {
  signing_secret: string;
}

export interface ServerKeyRecord {
  key_hash: string;
  app_id: string;
  company_id: string;
  revoked: boolean;
  created_ms: number;
}

/** The monthly cap of a new company: the one asked for, else the free plan's, else none (paid). */
export function monthlyCapFor(plan: Plan, requested?: number): number | null {
  return requested ?? (plan === 'free' ? FREE_PLAN_MONTHLY_CAP : null);
}
