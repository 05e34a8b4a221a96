import { randomBytes, randomUUID, scryptSync, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Role } from '../domain/team/members';
import { type Invitation, type TeamUser, type UserDirectory, UserExistsError } from '../domain/team/users';

/**
 * The local stand-in's user store (docs/console.md, "Locally"): DATA_DIR/console-users.json, read by
 * the sign-in stand-in (local/sign-in-provider.ts) and written by `admin user invite|remove`, as the
 * Cognito user pool is in AWS. Passwords are kept as scrypt hashes; an invitation answers a random
 * one-time password, as Cognito's invitation e-mail carries one.
 */
interface StoredUser extends TeamUser {
  readonly passwordHash: string;
  readonly salt: string;
}

/**
 * Locally the console's "user pool" is this store: CONSOLE_USER_POOL_ID is this prefix and the
 * store's path (local/console-site.ts for the console API, admin/target.ts for the CLI), so
 * `user invite` writes the file the stand-in signs users in from (functions/commands/user-commands.ts).
 */
export const LOCAL_POOL_PREFIX = 'local:';

export const consoleUsersPath = (dataDir: string) => join(dataDir, 'console-users.json');

export class LocalUserDirectory implements UserDirectory {
  constructor(private readonly file: string) {}

  async invite(user: { email: string; companyId: string | null; role: Role }): Promise<Invitation> {
    const users = this.read();
    const email = user.email.toLowerCase();
    if (users.some((u) => u.email === email)) throw new UserExistsError(email);
    const temporaryPassword = randomBytes(12).toString('base64url');
    const salt = randomBytes(16).toString('hex');
    const stored: StoredUser = {
      sub: randomUUID(),
      email,
      companyId: user.companyId,
      role: user.role,
      status: 'CONFIRMED',
      salt,
      passwordHash: hash(temporaryPassword, salt),
    };
    this.write([...users, stored]);
    return { user: publicUser(stored), temporaryPassword };
  }

  async remove(email: string): Promise<boolean> {
    const users = this.read();
    const kept = users.filter((u) => u.email !== email.toLowerCase());
    if (kept.length === users.length) return false;
    this.write(kept);
    return true;
  }

  async find(email: string): Promise<TeamUser | undefined> {
    const found = this.read().find((u) => u.email === email.toLowerCase());
    return found && publicUser(found);
  }

  async list(companyId?: string | null): Promise<TeamUser[]> {
    return this.read()
      .filter((u) => companyId === undefined || u.companyId === companyId)
      .map(publicUser);
  }

  /** The user whose e-mail and password these are (the stand-in's sign-in form), or undefined. */
  signIn(email: string, password: string): TeamUser | undefined {
    const found = this.read().find((u) => u.email === email.toLowerCase());
    if (!found) return undefined;
    const [a, b] = [Buffer.from(hash(password, found.salt), 'hex'), Buffer.from(found.passwordHash, 'hex')];
    return a.length === b.length && timingSafeEqual(a, b) ? publicUser(found) : undefined;
  }

  bySub(sub: string): TeamUser | undefined {
    const found = this.read().find((u) => u.sub === sub);
    return found && publicUser(found);
  }

  private read(): StoredUser[] {
    return existsSync(this.file) ? (JSON.parse(readFileSync(this.file, 'utf8')) as StoredUser[]) : [];
  }

  /** Written whole and renamed over the old file, so the stand-in never reads half a file. */
  private write(users: readonly StoredUser[]): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const partial = `${this.file}.${randomBytes(4).toString('hex')}.partial`;
    writeFileSync(partial, JSON.stringify(users, null, 2), { mode: 0o600 });
    renameSync(partial, this.file);
  }
}

const hash = (password: string, salt: string) => scryptSync(password, salt, 32).toString('hex');

const publicUser = ({ sub, email, companyId, role, status }: StoredUser): TeamUser => ({ sub, email, companyId, role, status });
