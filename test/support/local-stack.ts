import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SigningSecretStore } from '../../functions/adapters/signing-secret-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import type { AppWithSecret, Company } from '../../functions/domain/tenants/tenant';
import { resourceName } from '../../functions/shared/config';
import type { LocalConsoleSite } from '../../local/console-site';
import { type Runtime, type RuntimeOptions, startRuntime } from '../../local/runtime';

/**
 * The whole local service for an integration test: emulators on free ports in a fresh temporary
 * data directory, every route served on a free port, and the process environment pointed at it
 * (so adapters and handlers used directly in the test reach the same emulators).
 */
export interface LocalStack extends Runtime {
  dataDir: string;
  /** The console with sign-in, started (RuntimeOptions.consolePort). */
  console?: LocalConsoleSite;
  /** Closes the runtime and removes its data directory. */
  stop(): Promise<void>;
}

export async function startLocalStack(options: Partial<RuntimeOptions> = {}): Promise<LocalStack> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'attribution-test-'));
  process.env.DATA_DIR = dataDir;
  // Schedules run when a test runs them (stack.scheduler.run): one firing on its own (the lane
  // sweep, every minute) would write between a test's writes and trip its injected faults.
  const runtime = await startRuntime({ port: 0, seed: false, onError: () => undefined, schedules: false, ...options, dataDir });
  return {
    ...runtime,
    console: await runtime.consoleReady,
    dataDir,
    stop: async () => {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Tenant {
  company: Company;
  app: AppWithSecret;
  serverKey: string;
}

/** A company with one app and one server key, made through the same store the admin CLI uses. */
export async function createTenant(
  overrides: { plan?: 'free' | 'paid'; monthlyCap?: number; app?: Partial<Parameters<TenantStore['createApp']>[0]> } = {},
): Promise<Tenant> {
  const tenants = new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets')));
  const company = await tenants.createCompany({ name: 'Test Co', plan: overrides.plan, monthlyCap: overrides.monthlyCap });
  const app = await tenants.createApp({
    companyKey: company.company_key,
    name: 'Test App',
    ios_url: 'https://apps.apple.com/app/id1234567890',
    android_url: 'https://play.google.com/store/apps/details?id=com.example.test',
    web_url: 'https://example.com/app',
    ...overrides.app,
  });
  const { serverKey } = await tenants.createServerKey(app.app_key);
  return { company, app, serverKey };
}
