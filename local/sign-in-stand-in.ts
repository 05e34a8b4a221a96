import { createPrivateKey, generateKeyPairSync, type JsonWebKey, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GrantContext, default as Provider } from 'oidc-provider';
import { consoleUsersPath, LocalUserDirectory } from '../functions/adapters/console-users-file';
import { CLAIM } from '../functions/domain/team/members';
import type { TeamUser } from '../functions/domain/team/users';

/**
 * The local stand-in of the console's Cognito user pool (docs/console.md, "Locally"; ADR 0007):
 * an OpenID Connect provider (oidc-provider) for one public app client, authorization code with
 * PKCE only, signing in the users `admin user invite` put in DATA_DIR/console-users.json, and
 * issuing ID tokens with Cognito's claims (`custom:role`, `custom:company_id`, `email`,
 * `cognito:username`, `token_use: id`), so the page, the console API's JWT check and the tests
 * run the whole sign-in without AWS.
 *
 * It runs as a child process of the runtime (local/console-site.ts starts it): oidc-provider is an
 * ES module, which the runtime's CommonJS (and Jest's module loader) cannot load in-process.
 * The parent gives its settings in STAND_IN_SETTINGS and reads one line of JSON, `{"issuer": ...}`,
 * from stdout; the stand-in exits when its stdin closes, so it never outlives the runtime.
 */
export interface StandInSettings {
  readonly dataDir: string;
  readonly host: string;
  readonly clientId: string;
  /** The console's page: where sign-in returns to and sign-out lands. */
  readonly consoleUrl: string;
}

/** The ID token's lifetime, as the deployed pool's app client sets it (lib/constructs/console-site.ts). */
const ID_TOKEN_SECONDS = 3600;

/** The claims of a user's ID token, named as Cognito names them. */
export function cognitoClaims(user: TeamUser): Record<string, string | boolean> {
  return {
    sub: user.sub,
    email: user.email,
    email_verified: true,
    'cognito:username': user.email,
    [CLAIM.role]: user.role,
    ...(user.companyId === null ? {} : { [CLAIM.companyId]: user.companyId }),
    token_use: 'id',
  };
}

/**
 * A fresh RSA signing key as a JWK, read from a key object of its own. Exporting the JWK of the
 * key object `generateKeyPairSync` returns can hang the process for good (Node 20 and 22): the
 * export holds the key's lock while it allocates, and a garbage collection then finalises the
 * spent key-generation job, which takes the same lock. Seen as a stand-in that listened and never
 * answered, so the console never got ready and `npm start` never stopped (a gdb backtrace:
 * `KeyObjectHandle::ExportJWK` → GC → `~KeyGenJob` → `uv_mutex_lock`). The PEM text shares nothing.
 */
export function signingJwk(modulusLength = 2048): JsonWebKey {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return createPrivateKey(privateKey).export({ format: 'jwk' });
}

async function serve(settings: StandInSettings): Promise<void> {
  const { default: OidcProvider } = await import('oidc-provider');
  const users = new LocalUserDirectory(consoleUsersPath(settings.dataDir));
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, settings.host, () => resolve()));
  const issuer = `http://${settings.host}:${(server.address() as AddressInfo).port}`;
  const provider = new OidcProvider(issuer, {
    clients: [
      {
        client_id: settings.clientId,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [`${settings.consoleUrl}/`],
        post_logout_redirect_uris: [`${settings.consoleUrl}/`],
      },
    ],
    jwks: { keys: [{ ...signingJwk(), kid: 'stand-in', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    // Cognito's ID token carries the user's attributes whatever the access token holds.
    conformIdTokenClaims: false,
    claims: { openid: ['sub', 'cognito:username', CLAIM.role, CLAIM.companyId, 'token_use'], email: ['email', 'email_verified'] },
    scopes: ['openid', 'email', 'profile'],
    ttl: { IdToken: ID_TOKEN_SECONDS, AccessToken: ID_TOKEN_SECONDS },
    features: {
      devInteractions: { enabled: false },
      // Sign-out ends the session at once, as Cognito's /logout does, with no "sign out?" question.
      rpInitiatedLogout: {
        enabled: true,
        logoutSource(ctx: { body: string }, form: string) {
          const confirmed = form.replace('</form>', '<input type="hidden" name="logout" value="yes"></form>');
          ctx.body = `<!doctype html><html lang="en"><body>${confirmed}<script>document.forms[0].submit()</script></body></html>`;
        },
      },
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, sub: string) {
      const user = users.bySub(sub);
      return user && { accountId: sub, claims: async () => cognitoClaims(user) };
    },
    // The console is the pool's own client: no consent screen, as Cognito's hosted sign-in shows none.
    async loadExistingGrant(ctx: GrantContext) {
      const { client, session } = ctx.oidc;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  const callback = provider.callback();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const uid = /^\/interaction\/([\w-]+)(\/login)?$/.exec(request.url ?? '');
    if (!uid) return callback(request, response);
    signInForm(provider, users, request, response, Boolean(uid[2])).catch((error: unknown) => {
      response.writeHead(400, { 'content-type': 'text/plain' });
      response.end(`sign-in failed: ${(error as Error).message}`);
    });
  });
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
}

/** The hosted sign-in's page: e-mail and password, checked against the local store. */
async function signInForm(
  provider: Provider,
  users: LocalUserDirectory,
  request: IncomingMessage,
  response: ServerResponse,
  submitted: boolean,
): Promise<void> {
  const { uid } = await provider.interactionDetails(request, response);
  let error = '';
  if (submitted) {
    const form = new URLSearchParams(await bodyOf(request));
    const user = users.signIn(form.get('email') ?? '', form.get('password') ?? '');
    if (user)
      return provider.interactionFinished(request, response, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
    error = '<p role="alert">Incorrect e-mail or password.</p>';
  }
  response.writeHead(submitted ? 401 : 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in to the attribution console</h1>${error}
<form method="post" action="/interaction/${uid}/login">
<label>E-mail <input name="email" type="email" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form></body></html>`);
}

/** A sign-in form is two short fields: more than 8 KiB is not one. */
async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 8192) throw new Error('form too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

if (require.main === module) {
  const settings = JSON.parse(process.env.STAND_IN_SETTINGS ?? '{}') as StandInSettings;
  // Gone with the parent: its end of stdin closes when it exits, however it exits.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
  serve(settings).catch((error: unknown) => {
    process.stderr.write(`sign-in stand-in: ${(error as Error).stack}\n`);
    process.exit(1);
  });
}
