import type { Role } from './members';

/** A console user as the directory (Cognito, or the local stand-in's store) holds them. */
export interface TeamUser {
  readonly sub: string;
  readonly email: string;
  /** null for an operator of the deployment. */
  readonly companyId: string | null;
  readonly role: Role;
  /** Cognito's user status (FORCE_CHANGE_PASSWORD until the first sign-in, CONFIRMED after); the stand-in's is CONFIRMED. */
  readonly status: string;
}

export interface Invitation {
  readonly user: TeamUser;
  /**
   * The local stand-in's one-time password, shown once to whoever invited; Cognito e-mails its own
   * temporary password to the user instead, and this is absent.
   */
  readonly temporaryPassword?: string;
}

/**
 * Where console users live: the Cognito user pool in AWS (functions/adapters/cognito-users.ts), a
 * file beside the local runtime's data under `npm start` (functions/adapters/console-users-file.ts). Role and company
 * are attributes only an administrator sets.
 */
export interface UserDirectory {
  invite(user: { email: string; companyId: string | null; role: Role }): Promise<Invitation>;
  /** False when there is no such user. */
  remove(email: string): Promise<boolean>;
  find(email: string): Promise<TeamUser | undefined>;
  /** Every user, or a company's (companyId) or the operators (null). */
  list(companyId?: string | null): Promise<TeamUser[]>;
}

/** 409: that e-mail address already has a user. */
export class UserExistsError extends Error {
  constructor(email: string) {
    super(`a console user with the e-mail ${email} exists already`);
    this.name = 'UserExistsError';
  }
}
