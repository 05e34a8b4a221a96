import { command, type Meta } from './api';

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
  created_ms: number;
}

/**
 * The company and app every page works on, chosen in the header and kept across reloads. Pages
 * redraw when the choice changes.
 */
class Selection {
  meta!: Meta;
  companies: Company[] = [];
  apps: AppSummary[] = [];
  companyKey: string | undefined = localStorage.getItem('console.company') ?? undefined;
  appKey: string | undefined = localStorage.getItem('console.app') ?? undefined;
  private readonly listeners = new Set<() => void>();

  get company(): Company | undefined {
    return this.companies.find((c) => c.company_key === this.companyKey);
  }

  get app(): AppSummary | undefined {
    return this.apps.find((a) => a.app_key === this.appKey);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reloads the companies (and the chosen one's apps), keeping the choice when it still exists. */
  async refresh(prefer: { companyKey?: string; appKey?: string } = {}): Promise<void> {
    this.companies = (await command<{ companies: Company[] }>('company list')).companies;
    const companyKey = prefer.companyKey ?? this.companyKey;
    this.companyKey = this.companies.some((c) => c.company_key === companyKey) ? companyKey : this.companies[0]?.company_key;
    this.apps = this.companyKey ? (await command<{ apps: AppSummary[] }>('app list', { 'company-key': this.companyKey })).apps : [];
    const appKey = prefer.appKey ?? this.appKey;
    this.appKey = this.apps.some((a) => a.app_key === appKey) ? appKey : this.apps[0]?.app_key;
    this.save();
    for (const listener of this.listeners) listener();
  }

  selectCompany(companyKey: string): Promise<void> {
    return this.refresh({ companyKey, appKey: companyKey === this.companyKey ? this.appKey : '' });
  }

  selectApp(appKey: string): Promise<void> {
    return this.refresh({ appKey });
  }

  private save(): void {
    for (const [name, value] of [
      ['console.company', this.companyKey],
      ['console.app', this.appKey],
    ] as const) {
      if (value) localStorage.setItem(name, value);
      else localStorage.removeItem(name);
    }
  }
}

export const selection = new Selection();
