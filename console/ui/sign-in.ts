import { UserManager, WebStorageStateStore } from 'oidc-client-ts';
import { h, replace } from './dom';
import { signInSettings, useIdToken } from './session';

/**
 * Sign-in for the console with a user pool (docs/console.md, "Sign-in"; ADR 0007): the OAuth 2.0
 * authorization code flow with PKCE by oidc-client-ts, against Cognito in AWS or the local
 * stand-in under npm start. Tokens stay in this tab: the library's state and the user in
 * sessionStorage (never localStorage), the ID token in memory for the API's requests. There is no
 * silent renewal: after the ID token's hour the API answers 401 and the member signs in again.
 */
let manager: UserManager | undefined;

/** Whether the page may go on: false while the browser is sent to sign in (or when it has no sign-in at all, true). */
export async function signIn(root: HTMLElement): Promise<boolean> {
  const settings = signInSettings();
  if (!settings) return true;
  const home = `${location.origin}/`;
  const store = new WebStorageStateStore({ store: sessionStorage });
  manager = new UserManager({
    authority: settings.authority,
    client_id: settings.clientId,
    redirect_uri: home,
    post_logout_redirect_uri: home,
    response_type: 'code',
    scope: 'openid email profile',
    userStore: store,
    stateStore: store,
    automaticSilentRenew: false,
  });
  const query = new URLSearchParams(location.search);
  if (query.has('code') && query.has('state')) {
    const user = await manager.signinRedirectCallback();
    // Back to the view the member was on before signing in, without the code in the address bar.
    history.replaceState(null, '', `/${typeof user.state === 'string' ? user.state : ''}`);
  }
  const user = await manager.getUser();
  if (user && !user.expired && user.id_token) {
    useIdToken(user.id_token, () => void signInAgain());
    return true;
  }
  replace(
    root,
    h(
      'main',
      { class: 'sign-in' },
      h('h1', null, 'Attribution console'),
      h('p', null, 'Sign in with the e-mail address your team invited.'),
      h('button', { type: 'button', onclick: () => void signInAgain() }, 'Sign in'),
    ),
  );
  return false;
}

async function signInAgain(): Promise<void> {
  await manager?.removeUser();
  await manager?.signinRedirect({ state: location.hash });
}

/** Signs out: the tab forgets the tokens, and the sign-in ends its session where it can (the stand-in's end-session endpoint). */
export async function signOut(): Promise<void> {
  if (!manager) return;
  const user = await manager.getUser();
  await manager.removeUser();
  const metadata = await manager.metadataService.getMetadata().catch(() => undefined);
  if (metadata?.end_session_endpoint) await manager.signoutRedirect({ id_token_hint: user?.id_token });
  else location.assign('/');
}
