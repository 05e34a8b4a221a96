import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminGetUserCommand,
  type AttributeType,
  CognitoIdentityProviderClient,
  ListUsersCommand,
  UserNotFoundException,
  UsernameExistsException,
} from '@aws-sdk/client-cognito-identity-provider';
import { CLAIM, isRole } from '../domain/team/members';
import { type Invitation, type TeamUser, type UserDirectory, UserExistsError } from '../domain/team/users';

/**
 * The console's users in its Cognito user pool (lib/constructs/console-site.ts): the e-mail address
 * is the user name, role and company are the custom attributes only these administrator calls
 * write. Cognito e-mails the invitation with a temporary password; the user sets their own (and,
 * if they wish, a TOTP app for MFA) at the first sign-in.
 */
export class CognitoUsers implements UserDirectory {
  private readonly client = new CognitoIdentityProviderClient({});

  constructor(private readonly userPoolId: string) {}

  async invite(user: { email: string; companyId: string | null; role: string }): Promise<Invitation> {
    const attributes: AttributeType[] = [
      { Name: 'email', Value: user.email },
      { Name: 'email_verified', Value: 'true' },
      { Name: CLAIM.role, Value: user.role },
      ...(user.companyId === null ? [] : [{ Name: CLAIM.companyId, Value: user.companyId }]),
    ];
    try {
      const { User } = await this.client.send(
        new AdminCreateUserCommand({
          UserPoolId: this.userPoolId,
          Username: user.email,
          UserAttributes: attributes,
          DesiredDeliveryMediums: ['EMAIL'],
        }),
      );
      return { user: teamUser(User?.Attributes ?? attributes, User?.UserStatus) };
    } catch (error) {
      if (error instanceof UsernameExistsException) throw new UserExistsError(user.email);
      throw error;
    }
  }

  async remove(email: string): Promise<boolean> {
    try {
      await this.client.send(new AdminDeleteUserCommand({ UserPoolId: this.userPoolId, Username: email }));
      return true;
    } catch (error) {
      if (error instanceof UserNotFoundException) return false;
      throw error;
    }
  }

  async find(email: string): Promise<TeamUser | undefined> {
    try {
      const user = await this.client.send(new AdminGetUserCommand({ UserPoolId: this.userPoolId, Username: email }));
      return teamUser(user.UserAttributes ?? [], user.UserStatus);
    } catch (error) {
      if (error instanceof UserNotFoundException) return undefined;
      throw error;
    }
  }

  /** ListUsers cannot filter on custom attributes: the pool's users are read in pages and kept by company here. */
  async list(companyId?: string | null): Promise<TeamUser[]> {
    const users: TeamUser[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListUsersCommand({ UserPoolId: this.userPoolId, PaginationToken: token, Limit: 60 }));
      for (const user of page.Users ?? []) users.push(teamUser(user.Attributes ?? [], user.UserStatus));
      token = page.PaginationToken;
    } while (token);
    return users.filter((user) => companyId === undefined || user.companyId === companyId);
  }
}

function teamUser(attributes: readonly AttributeType[], status: string | undefined): TeamUser {
  const value = (name: string) => attributes.find((a) => a.Name === name)?.Value;
  const role = value(CLAIM.role);
  return {
    sub: value('sub') ?? '',
    email: value('email') ?? '',
    companyId: value(CLAIM.companyId) ?? null,
    // A user made outside these commands (in the AWS console) without a role is a viewer of nothing: the API refuses them.
    role: isRole(role) ? role : 'viewer',
    status: status ?? 'UNKNOWN',
  };
}
