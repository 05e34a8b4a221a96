/**
 * The signed-in member's session, for the deployed console (and its local stand-in under npm
 * start): the page's HTML names the sign-in's authority and app client (console/page.ts), and
 * every console API request carries the ID token (console/ui/sign-in.ts keeps it). The local
 * `npm run console` page names none: it is driven by its run's token instead (ADR 0005).
 * Written without the DOM's types, as node test code imports modules that import this one.
 */
type MetaSource = { querySelector(selector: string): { getAttribute(name: string): string | null } | null };
const metaContent = (name: string) =>
  (globalThis as { document?: MetaSource }).document?.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';

/** The sign-in the page's HTML names, if it is a console with sign-in. */
export const signInSettings = (): { authority: string; clientId: string } | undefined => {
  const authority = metaContent('console-authority');
  const clientId = metaContent('console-client-id');
  return authority && clientId ? { authority, clientId } : undefined;
};

let idToken: string | undefined;
let expired: () => void = () => undefined;

export function useIdToken(token: string, onExpired: () => void): void {
  idToken = token;
  expired = onExpired;
}

/** The headers that say who asks: the ID token with sign-in, the run's token in the local console. */
export function credentials(): Record<string, string> {
  return idToken === undefined ? { 'x-console-token': metaContent('console-token') } : { authorization: `Bearer ${idToken}` };
}

/** A 401 from the console API: the token expired or was revoked, so the member signs in again. */
export function sessionExpired(): void {
  expired();
}
