import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DataDirInUse, dataDirHolder, lockDataDir } from '../../../local/emulators';

let dataDir: string;
const lockFile = () => join(dataDir, 'runtime.lock');

/**
 * A zombie: `sleep 0` exits at once, and the shell, replaced by `sleep 3`, never waits for it. A
 * process killed with its parent stays one until something reaps it, two seconds here after a
 * kill -9 of npm start's process group.
 */
async function zombie(): Promise<{ pid: number; done: () => void }> {
  const shell = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 3'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = await new Promise<number>((resolve) =>
    shell.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
  );
  const state = () => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  };
  while (state() !== 'Z') await new Promise((resolve) => setTimeout(resolve, 10));
  return { pid, done: () => shell.kill() };
}

/** The pid of a process that has already exited. */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  return pid as number;
}

beforeEach(() => {
  dataDir = join(mkdtempSync(join(tmpdir(), 'data-dir-lock-')), 'data');
});

afterEach(() => {
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
});

describe('the data directory lock', () => {
  it('creates the directory, holds it with this process id, and gives it back on release', () => {
    const release = lockDataDir(dataDir);
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(process.pid));
    expect(dataDirHolder(dataDir)).toBe(process.pid);
    release();
    expect(existsSync(lockFile())).toBe(false);
    expect(dataDirHolder(dataDir)).toBeUndefined();
  });

  it('refuses a directory a live process holds and names that process', () => {
    lockDataDir(dataDir)();
    writeFileSync(lockFile(), `${process.ppid}\n`);
    expect(dataDirHolder(dataDir)).toBe(process.ppid);
    let refusal: unknown;
    try {
      lockDataDir(dataDir);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(DataDirInUse);
    expect((refusal as Error).message).toBe(
      `The data directory ${dataDir} is in use by npm start (pid ${process.ppid}); stop it first, or set DATA_DIR to another directory`,
    );
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(process.ppid));
  });

  it('refuses a second lock on the same directory from this process', () => {
    const release = lockDataDir(dataDir);
    try {
      expect(() => lockDataDir(dataDir)).toThrow(DataDirInUse);
      // The same directory spelt another way.
      expect(() => lockDataDir(relative(process.cwd(), dataDir))).toThrow(DataDirInUse);
    } finally {
      release();
    }
  });

  it('takes over a lock whose process is gone', () => {
    lockDataDir(dataDir)();
    writeFileSync(lockFile(), `${deadPid()}\n`);
    expect(dataDirHolder(dataDir)).toBeUndefined();
    const release = lockDataDir(dataDir);
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(process.pid));
    release();
  });

  // /proc is Linux's; elsewhere an orphan is reaped at once.
  (process.platform === 'linux' ? it : it.skip)('takes over a lock whose process is a zombie (killed, not yet reaped)', async () => {
    const { pid, done } = await zombie();
    try {
      lockDataDir(dataDir)();
      writeFileSync(lockFile(), `${pid}\n`);
      expect(dataDirHolder(dataDir)).toBeUndefined();
      lockDataDir(dataDir)();
    } finally {
      done();
    }
  });

  it("takes over a lock left with this process's id by an earlier process (ids are reused after a restart)", () => {
    lockDataDir(dataDir)();
    writeFileSync(lockFile(), `${process.pid}\n`);
    expect(dataDirHolder(dataDir)).toBeUndefined();
    const release = lockDataDir(dataDir);
    expect(dataDirHolder(dataDir)).toBe(process.pid);
    release();
  });

  it('leaves alone on release a lock another process has taken since', () => {
    const release = lockDataDir(dataDir);
    writeFileSync(lockFile(), `${process.ppid}\n`);
    release();
    expect(readFileSync(lockFile(), 'utf8').trim()).toBe(String(process.ppid));
  });
});
