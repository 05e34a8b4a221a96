import { ServiceError } from '../common/errors';

/**
 * Who may use the deployed console (docs/console.md, "Roles"): a member of one company with one
 * role, or an operator of the deployment. The identity provider (Amazon Cognito in AWS, the local
 * stand-in under `npm start`) says which in the token's claims; the console API reads them here and
 * nowhere else.
 */

/** The company roles, weakest first: each can do what the ones before it can. */
export const COMPANY_ROLES = ['viewer', 'marketer', 'admin'] as const;
export type CompanyRole = (typeof COMPANY_ROLES)[number];
/** An operator runs the deployment: every command, every company, as the admin CLI with AWS credentials. */
export type Role = CompanyRole | 'operator';
export const ROLES: readonly Role[] = [...COMPANY_ROLES, 'operator'];

export type Member =
  | { readonly kind: 'company'; readonly sub: string; readonly email: string; readonly companyId: string; readonly role: CompanyRole }
  | { readonly kind: 'operator'; readonly sub: string; readonly email: string };

/**
 * The claims that carry role and company: Cognito custom attributes, which only an administrator
 * (AdminCreateUser, AdminUpdateUserAttributes) may set; the app client cannot write them
 * (lib/constructs/console-site.ts), so a user cannot raise their own role.
 */
export const CLAIM = { companyId: 'custom:company_id', role: 'custom:role' } as const;

/** A token whose claims name no valid member: 403 not_a_member (it was issued, so it is not 401). */
export class NotAMemberError extends ServiceError {
  constructor() {
    super(403, 'not_a_member');
  }
}

/** The longest company id a token may carry (the user pool's custom:company_id attribute has the same limit). */
export const COMPANY_ID_MAX = 64;
const COMPANY_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** The member a verified token's claims name; NotAMemberError for a role or company that is missing or malformed. */
export function memberOfClaims(claims: Readonly<Record<string, unknown>>): Member {
  const { sub, email } = claims;
  const role = claims[CLAIM.role];
  const companyId = claims[CLAIM.companyId];
  if (typeof sub !== 'string' || sub === '' || !isRole(role)) throw new NotAMemberError();
  const address = typeof email === 'string' ? email : '';
  if (role === 'operator') return { kind: 'operator', sub, email: address };
  if (typeof companyId !== 'string' || !COMPANY_ID.test(companyId)) throw new NotAMemberError();
  return { kind: 'company', sub, email: address, companyId, role };
}

/** Whether the member's role reaches the minimum a command needs (an operator reaches every one). */
export function reaches(member: Member, minimum: Role): boolean {
  if (member.kind === 'operator') return true;
  if (minimum === 'operator') return false;
  return COMPANY_ROLES.indexOf(member.role) >= COMPANY_ROLES.indexOf(minimum);
}
