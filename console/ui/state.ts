import { command, type Meta } from './api';
import { type Period, resolvePeriod } from './period';
import { param, setView } from './view';

/** What `company list` and `app list` print. */
export interface Company {
  company_id: string;
  company_key: string;
  name: string;
  plan: 'free' | 'paid';
  monthly_cap: number | null;
  suspended: boolean;
  created_ms: number;
}

export interface AppSummary {
  app_id: string;
  app_key: string;
  company_key: string;
  name: string;
  ios_url?: string;
  android_url?: string;
  web_url?: string;
  probabilistic: boolean;
  lookback_days: number;
  /** The IANA zone the app's report days are counted in; absent on apps made before zones (UTC). */
  time_zone?: string;
  created_ms: number;
}

/**
 * The company and app every page works on: the URL's (`company=`, `app=`, so a shared link opens
 * the same view) first, else the last chosen (localStorage). Choosing one in the header writes it
 * into the URL; the shell reloads the lists when the URL names another, and pages redraw.
 */
class Selection {
  meta!: Meta;
  companies: Company[] = [];
  apps: AppSummary[] = [];
  companyKey: string | undefined = stored('console.company');
  appKey: string | undefined = stored('console.app');
  private readonly listeners = new Set<() => void>();

  get company(): Company | undefined {
    return this.companies.find((c) => c.company_key === this.companyKey);
  }

  get app(): AppSummary | undefined {
    return this.apps.find((a) => a.app_key === this.appKey);
  }

  /** The app's time zone, whose local days the periods are (UTC when the app has none). */
  get timeZone(): string {
    return this.app?.time_zone || 'UTC';
  }

  /** The URL's period (`period`, `since`, `until`) in the app's zone, now. */
  period(): Period {
    return resolvePeriod({ period: param('period'), since: param('since'), until: param('until') }, this.timeZone, Date.now());
  }

  /** The URL names another company or app than the one loaded: the shell refreshes before it redraws. */
  get outOfDate(): boolean {
    const company = param('company');
    const app = param('app');
    return (company !== undefined && company !== this.companyKey) || (app !== undefined && app !== this.appKey);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reloads the companies (and the chosen one's apps), keeping the choice when it still exists:
   * `prefer` (a company just created), else the URL's, else the last one. The choice is written
   * back into the URL (the same history entry) and localStorage; listeners redraw unless `quiet`.
   */
  async refresh(prefer: { companyKey?: string; appKey?: string } = {}, quiet = false): Promise<void> {
    this.companies = (await command<{ companies: Company[] }>('company list')).companies;
    const companyKey = prefer.companyKey ?? param('company') ?? this.companyKey;
    this.companyKey = this.companies.some((c) => c.company_key === companyKey) ? companyKey : this.companies[0]?.company_key;
    this.apps = this.companyKey ? (await command<{ apps: AppSummary[] }>('app list', { 'company-key': this.companyKey })).apps : [];
    const appKey = prefer.appKey ?? param('app') ?? this.appKey;
    this.appKey = this.apps.some((a) => a.app_key === appKey) ? appKey : this.apps[0]?.app_key;
    this.save();
    if (!quiet) for (const listener of this.listeners) listener();
  }

  /** Another company: into the URL (a new history entry, so Back returns); its apps' first is chosen. */
  selectCompany(companyKey: string): Promise<void> {
    setView({ company: companyKey, app: companyKey === this.companyKey ? this.appKey : null });
    return Promise.resolve();
  }

  selectApp(appKey: string): Promise<void> {
    setView({ company: this.companyKey, app: appKey });
    return Promise.resolve();
  }

  /** The choice into the URL, in place (no hashchange: the caller redraws): a link without it gets it. */
  writeToUrl(): void {
    setView({ company: this.companyKey, app: this.appKey }, { replace: true, silent: true });
  }

  private save(): void {
    for (const [name, value] of [
      ['console.company', this.companyKey],
      ['console.app', this.appKey],
    ] as const) {
      if (value) localStorage.setItem(name, value);
      else localStorage.removeItem(name);
    }
    this.writeToUrl();
  }
}

function stored(name: string): string | undefined {
  return localStorage.getItem(name) ?? undefined;
}

export const selection = new Selection();
