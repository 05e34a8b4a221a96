// `npm run console` as its own process while `npm start` is stopped and started again, as the
// README's tour does: the console finds the runtime again (on new ports) at its next request, and
// while there is none it says so in words rather than with a socket error.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN_HEADER } from '../../console/server';
import { type Runtime, startRuntime } from '../../local/runtime';

const root = join(__dirname, '..', '..');
// The console's environment is the shell's, not this process's once a runtime has pointed it at the emulators.
const shellEnv = { ...process.env };

interface RunningConsole {
  child: ChildProcess;
  url: string;
  token: string;
}

/** Starts `npm run console -- --port 0` (tsx directly, so its process group is the one stopped). */
function startConsoleProcess(dataDir: string): Promise<RunningConsole> {
  const child = spawn(join(root, 'node_modules', '.bin', 'tsx'), ['console/server.ts', '--port', '0'], {
    cwd: root,
    env: { ...shellEnv, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the console did not start:\n${output}`)), 30_000);
    const onData = async (chunk: Buffer) => {
      output += chunk.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(output)?.[0];
      if (!url || !/Ctrl-C stops it/.test(output)) return;
      clearTimeout(timer);
      const page = await (await fetch(url)).text();
      const token = /<meta name="console-token" content="([^"]+)">/.exec(page)?.[1] ?? '';
      resolve({ child, url, token });
    };
    child.stdout?.on('data', (chunk: Buffer) => void onData(chunk));
    child.stderr?.on('data', (chunk: Buffer) => void onData(chunk));
    child.on('exit', (code) => reject(new Error(`the console exited with ${code}:\n${output}`)));
  });
}

async function api(console_: RunningConsole, path: string, body: object): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${console_.url}${path.slice(1)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TOKEN_HEADER]: console_.token },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const start = (dataDir: string) => startRuntime({ dataDir, port: 0, seed: false, onError: () => undefined });

describe('the console across a restart of the local runtime', () => {
  let dataDir: string;
  let runtime: Runtime | undefined;
  let console_: RunningConsole | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'console-restart-'));
  });

  afterAll(async () => {
    if (console_) {
      console_.child.removeAllListeners('exit');
      const exited = new Promise((resolve) => console_?.child.once('exit', resolve));
      process.kill(-(console_.child.pid as number), 'SIGTERM');
      await exited;
    }
    await runtime?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('says the runtime is not running while it is stopped, and reaches the restarted one on its new ports', async () => {
    runtime = await start(dataDir);
    console_ = await startConsoleProcess(dataDir);
    const created = await api(console_, '/api/command', { command: 'company create', flags: { name: 'Before Restart' } });
    expect(created.status).toBe(200);
    const { company_key } = created.body as { company_key: string };
    const app = await api(console_, '/api/command', {
      command: 'app create',
      flags: { 'company-key': company_key, name: 'Game', 'web-url': 'https://example.com/game' },
    });
    const link = await api(console_, '/api/command', { command: 'link create', flags: { 'app-key': app.body.app_key, partner: 'meta' } });
    expect(link.status).toBe(200);
    const firstPorts = [runtime.baseUrl, runtime.endpoints.dynamodb, runtime.endpoints.control];

    await runtime.close();
    runtime = undefined;
    const stopped = await api(console_, '/api/command', { command: 'company list', flags: {} });
    expect(stopped.status).toBe(502);
    expect(stopped.body.error).toMatch(/^no local runtime is running for DATA_DIR=.*: start one with `npm start`/);
    expect(JSON.stringify(stopped.body)).not.toMatch(/ECONNREFUSED/);
    expect((await api(console_, '/api/meta', {})).body.error).toMatch(/no local runtime is running/);

    runtime = await start(dataDir);
    expect([runtime.baseUrl, runtime.endpoints.dynamodb, runtime.endpoints.control]).not.toEqual(firstPorts);
    // The tables on disk (the company made before the restart) through the new emulators, and the new base URL.
    const companies = await api(console_, '/api/command', { command: 'company list', flags: {} });
    expect(companies.status).toBe(200);
    expect(companies.body.companies).toContainEqual(expect.objectContaining({ company_key, name: 'Before Restart' }));
    const trial = await api(console_, '/api/command', { command: 'link try', flags: { 'link-id': link.body.link_id } });
    expect(trial.status).toBe(200);
    expect(trial.body.url).toBe(`${runtime.baseUrl}/l/${String(link.body.link_id)}`);
    expect((await api(console_, '/api/meta', {})).body.target).toEqual({ base_url: runtime.baseUrl, stack: null });
  }, 90_000);
});
