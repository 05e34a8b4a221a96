import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServer } from 'node:net';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts `npm start` and resolves once it has printed the demo credentials. */
function start(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string; readyMs: number }> {
  const started = Date.now();
  const child = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not get ready:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/"link_url"/.test(output) && /Try it:/.test(output)) {
        clearTimeout(timer);
        resolve({ child, output: () => output, readyMs: Date.now() - started });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
  });
}

/**
 * Signals the whole process group, as a terminal does, and waits until the runtime has finished
 * its clean shutdown: it removes endpoints.json last, after the emulators flushed to disk. (npm
 * itself dies of the signal, so its exit code says nothing about the runtime.)
 */
async function stop(child: ChildProcess, dataDir: string): Promise<boolean> {
  child.removeAllListeners('exit');
  process.kill(-(child.pid as number), 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (!existsSync(join(dataDir, 'endpoints.json'))) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('npm start', () => {
  it('prints the demo credentials, serves /health, and keeps its data across a SIGTERM and restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
    const port = await freePort();
    const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port) };
    try {
      const first = await start(env);
      expect(first.readyMs).toBeLessThan(15_000);
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as { company_key: string; signing_secret: string };
      expect(first.output()).toContain(demo.company_key);
      expect(first.output()).toContain(`curl -i http://127.0.0.1:${port}/health`);

      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);

      const { stdout } = await run('npm', ['run', '--silent', 'admin', '--', 'company', 'create', '--name', 'Acme'], { cwd: root, env });
      const { company_key } = JSON.parse(stdout) as { company_key: string };

      expect(await stop(first.child, dataDir)).toBe(true);

      const second = await start(env);
      try {
        expect(second.output()).toContain('Demo tenant (from demo.json)');
        const suspended = await run('npm', ['run', '--silent', 'admin', '--', 'company', 'suspend', '--company-key', company_key], { cwd: root, env });
        expect(JSON.parse(suspended.stdout)).toEqual({ ok: true });
      } finally {
        expect(await stop(second.child, dataDir)).toBe(true);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
