import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consoleUsersPath, LocalUserDirectory } from '../functions/adapters/console-users-file';

/**
 * npm start's demo console user (docs/console.md, "Locally"): an admin of the demo company in the
 * sign-in stand-in's store, invited at the first start and kept, with its password, in
 * DATA_DIR/console-demo-user.json (readable by its owner alone), so every start prints the same
 * one. Removed with `admin user remove`, it is invited again at the next start.
 */
export interface DemoConsoleUser {
  readonly email: string;
  readonly password: string;
  readonly role: 'admin';
}

export const DEMO_CONSOLE_EMAIL = 'demo-admin@example.com';

export async function demoConsoleUser(dataDir: string, companyId: string): Promise<DemoConsoleUser> {
  const users = new LocalUserDirectory(consoleUsersPath(dataDir));
  const file = join(dataDir, 'console-demo-user.json');
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as DemoConsoleUser;
    if (users.signIn(kept.email, kept.password)) return kept;
    await users.remove(kept.email);
  }
  const { temporaryPassword } = await users.invite({ email: DEMO_CONSOLE_EMAIL, companyId, role: 'admin' });
  const user: DemoConsoleUser = { email: DEMO_CONSOLE_EMAIL, password: temporaryPassword ?? '', role: 'admin' };
  writeFileSync(file, `${JSON.stringify(user, null, 2)}\n`, { mode: 0o600 });
  return user;
}

/** The banner's lines for the console: where it is, and whom to sign in as. */
export function consoleBanner(url: string, user: DemoConsoleUser): string {
  return [
    `Console (sign-in with roles, as deployed): ${url}/`,
    `  sign in as the demo company's ${user.role}: ${user.email} / ${user.password}`,
    '  more users: npm run admin -- user invite --email E --role viewer|marketer|admin --company-key K',
  ].join('\n');
}
