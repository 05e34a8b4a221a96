import { credentials, sessionExpired, signInSettings } from './session';

/**
 * The console's one way to the service: an admin command by name with CLI-style flags
 * (`{"app-key": "...", "honeypot": true}`), run by the console server through admin/commands.ts
 * or, with sign-in, by the console API (functions/console-api.ts). Every request carries the
 * run's token, read from this page's own HTML, or the signed-in member's ID token
 * (console/ui/session.ts).
 */

/** Who is not answering: the local runtime (the server's 502) or the console's own server (no answer at all). */
export type Unreachable = 'runtime' | 'console';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The flag at fault, when the server names one: the form marks that field. */
    readonly flag?: string,
    readonly unreachable?: Unreachable,
  ) {
    super(message);
  }
}

export type Flags = Record<string, string | boolean | undefined>;

const unreachableListeners = new Set<(error: ApiError) => void>();

/** Called whenever a request finds the runtime or the console gone (the shell shows its banner). */
export function onUnreachable(listener: (error: ApiError) => void): void {
  unreachableListeners.add(listener);
}

async function post<T>(path: string, body?: object): Promise<T> {
  let response: Response;
  try {
    response = await fetch(
      path,
      body === undefined
        ? { headers: credentials() }
        : { method: 'POST', headers: { 'content-type': 'application/json', ...credentials() }, body: JSON.stringify(body) },
    );
  } catch {
    // fetch rejects only when nothing answered: the console's own server is gone.
    throw unreachable(new ApiError(0, 'the console server did not answer', undefined, 'console'));
  }
  if (response.status === 401 && signInSettings()) sessionExpired();
  const answer = (await response.json().catch(() => ({ error: `HTTP ${response.status}` }))) as T & { error?: string; flag?: string };
  if (response.ok) return answer;
  const error = new ApiError(response.status, answer.error ?? `HTTP ${response.status}`, answer.flag);
  // 502 is the console server's answer when its target (the local runtime, a stack) cannot be reached.
  return Promise.reject(response.status === 502 ? unreachable(new ApiError(502, error.message, undefined, 'runtime')) : error);
}

function unreachable(error: ApiError): ApiError {
  for (const listener of unreachableListeners) listener(error);
  return error;
}

/**
 * Runs an admin command; flags left undefined or false are not sent, as the CLI would not pass
 * them, nor empty ones unless `sendEmpty` (an edit clearing a setting: `link update --web-url ''`).
 */
export function command<T = Record<string, unknown>>(name: string, flags: Flags = {}, { sendEmpty = false } = {}): Promise<T> {
  const sent = Object.fromEntries(
    Object.entries(flags).filter(([, value]) => value !== undefined && value !== false && (sendEmpty || value !== '')),
  );
  return post<T>('/api/command', { command: name, flags: sent });
}

export interface Meta {
  target: { base_url: string; stack: string | null };
  /** With sign-in: who is signed in (GET /api/me). */
  member?: { email: string; role: string; company_id: string | null };
  commands: string[];
  postback_macros: { name: string; description: string }[];
  /** Who is signed in, where the console has sign-in (issue 42): per-user choices are kept under it; absent locally. */
  user?: string;
}

/** The console's target and the commands it may run: with sign-in, the member's own (GET /api/me, the commands their role reaches). */
export const meta = () => (signInSettings() ? post<Meta>('/api/me') : post<Meta>('/api/meta', {}));

/** The Raw data page's last export per table: a read of the export bucket (console/export-status.ts), not an admin command. */
export const exportStatus = <T>(appKey: string) => post<T>('/api/export-status', { 'app-key': appKey });

/** An app's link settings and its link domains' well-known files (console/deep-link-tools.ts), not an admin command. */
export const appLinks = <T>(appKey: string) => post<T>('/api/app-links', { 'app-key': appKey });

/** A dry-run click on a link and the first-launch answer an app installed from it gets (console/deep-link-tools.ts). */
export const tryFirstLaunch = <T>(linkId: string, platform: 'ios' | 'android') =>
  post<T>('/api/try-first-launch', { 'link-id': linkId, platform });
