import { APP_KEY_PATTERN, COMPANY_KEY_PATTERN } from '../tenants/keys';
import { type SigningKeys, verifyingSecrets } from '../tenants/signing-keys';
import { EventApiError, MAX_RAW_BODY_BYTES } from './event-api';
import { isValidSignature } from './signature';

/**
 * The authentication step shared by POST /event and POST /privacy/delete, in docs/ingestion.md's
 * order: the three headers, the raw size, an empty body, the app key, the company key, the app
 * belonging to the company, the company not suspended, and the signature over the bytes as sent.
 * Nothing here logs or echoes a key, secret or signature.
 */
export interface EventCredentials {
  readonly companyKey?: string;
  readonly appKey?: string;
  readonly signature?: string;
}

/** What authentication needs of an app and a company; the tenant store's records have more. */
export interface SigningApp {
  readonly app_id: string;
  readonly company_id: string;
}
export interface AccountCompany {
  readonly company_id: string;
  readonly suspended: boolean;
}

export interface TenantLookup<A extends SigningApp, C extends AccountCompany> {
  appByKey(appKey: string): Promise<A | undefined>;
  companyByKey(companyKey: string): Promise<C | undefined>;
  /**
   * The app's signing secrets (the current one and those retired by a rotation, in their grace),
   * kept apart from the app: only the functions that verify signatures may read them. Undefined
   * means the store lost them: a fault of the service, not of the caller.
   */
  signingKeys(app: A): Promise<SigningKeys | undefined>;
}

export async function authenticate<A extends SigningApp, C extends AccountCompany>(
  credentials: EventCredentials,
  rawBody: Uint8Array,
  tenants: TenantLookup<A, C>,
  /** GET /sdk/v1/skan-schema has no body: its signature is over the empty one (docs/ios.md section 1). */
  options: { readonly emptyBody?: 'refused' | 'signed'; readonly nowMs?: number } = {},
): Promise<{ app: A; company: C }> {
  const { companyKey, appKey, signature } = credentials;
  if (!companyKey || !appKey || !signature) throw new EventApiError('missing_auth_headers');
  if (rawBody.length > MAX_RAW_BODY_BYTES) throw new EventApiError('body_too_large');
  if (rawBody.length === 0 && options.emptyBody !== 'signed') throw new EventApiError('empty_body');

  // A key that cannot exist is unknown without a read, so made-up keys cost no database calls.
  // Both look-ups go out together; the checks below still decide in the documented order.
  const [app, company] = await Promise.all([
    APP_KEY_PATTERN.test(appKey) ? tenants.appByKey(appKey) : undefined,
    COMPANY_KEY_PATTERN.test(companyKey) ? tenants.companyByKey(companyKey) : undefined,
  ]);
  if (!app) throw new EventApiError('unknown_app_key');
  if (!company) throw new EventApiError('unknown_company_key');
  if (app.company_id !== company.company_id) throw new EventApiError('app_company_mismatch');
  if (company.suspended) throw new EventApiError('company_suspended');
  // Read last, once everything else holds: a request refused above costs no read of a secret.
  const keys = await tenants.signingKeys(app);
  // A 503 the client retries, and an error logged: a 401 would tell a client with the right secret it was wrong.
  if (keys === undefined) throw new Error(`app ${app.app_id} has no signing secret`);
  // The current secret, or one a rotation retired whose grace has not ended (builds shipped before it).
  const secrets = verifyingSecrets(keys, options.nowMs ?? Date.now());
  if (!secrets.some((secret) => isValidSignature(secret, rawBody, signature))) throw new EventApiError('bad_signature');
  return { app, company };
}
