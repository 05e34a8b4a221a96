/**
 * The console's one way to the service: an admin command by name with CLI-style flags
 * (`{"app-key": "...", "honeypot": true}`), run by the console server through admin/commands.ts.
 * Every request carries the run's token, read from this page's own HTML.
 */

const token = document.querySelector<HTMLMetaElement>('meta[name="console-token"]')?.content ?? '';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type Flags = Record<string, string | boolean | undefined>;

async function post<T>(path: string, body: object): Promise<T> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-console-token': token },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({ error: `HTTP ${response.status}` }))) as T & { error?: string };
  if (!response.ok) throw new ApiError(response.status, answer.error ?? `HTTP ${response.status}`);
  return answer;
}

/** Runs an admin command; flags left undefined or false are not sent, as the CLI would not pass them. */
export function command<T = Record<string, unknown>>(name: string, flags: Flags = {}): Promise<T> {
  const sent = Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined && value !== false && value !== ''));
  return post<T>('/api/command', { command: name, flags: sent });
}

export interface Meta {
  target: { base_url: string; stack: string | null };
  commands: string[];
  postback_macros: { name: string; description: string }[];
}

export const meta = () => post<Meta>('/api/meta', {});

/** The Raw data page's last export per table: a read of the export bucket (console/export-status.ts), not an admin command. */
export const exportStatus = <T>(appKey: string) => post<T>('/api/export-status', { 'app-key': appKey });
