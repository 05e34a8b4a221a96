import { createHash, randomBytes } from 'node:crypto';
import type { LocalConsoleSite } from '../../local/console-site';

/**
 * A sign-in through the local stand-in of the console's user pool as a browser makes it, without
 * one: the authorization request with a PKCE challenge, the hosted sign-in form, the redirect back
 * with a code, and the code (and verifier) exchanged for tokens. Answers the ID token the page
 * would send, or the form's status when the stand-in refuses the password.
 */
export async function signInThroughStandIn(
  site: { readonly url: string; readonly signIn: Pick<LocalConsoleSite['signIn'], 'issuer' | 'clientId'> },
  email: string,
  password: string,
): Promise<{ idToken: string } | { refused: number }> {
  const { issuer, clientId } = site.signIn;
  const redirectUri = `${site.url}/`;
  const verifier = randomBytes(32).toString('base64url');
  const jar = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(new URL(url, issuer), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  const authorize = new URL('/auth', issuer);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  let response = await go(authorize.href);
  const form = response.headers.get('location') ?? '';
  await go(form);
  response = await go(`${form}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, password }).toString(),
  });
  if (response.status === 401) return { refused: response.status };
  // The stand-in resumes the authorization, then sends the browser back to the console with a code.
  while (response.status >= 300 && response.status < 400) {
    const location = response.headers.get('location') ?? '';
    if (location.startsWith(redirectUri)) {
      const code = new URL(location).searchParams.get('code') ?? '';
      const tokens = await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          client_id: clientId,
          code_verifier: verifier,
        }),
      });
      const { id_token } = (await tokens.json()) as { id_token: string };
      return { idToken: id_token };
    }
    response = await go(location);
  }
  throw new Error(`the stand-in answered ${response.status} ${await response.text()}`);
}
