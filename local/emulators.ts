import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { resolve as absolute, join } from 'node:path';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { closeServer } from './close-server';
import { makeS3PutsAtomic, recoverS3Store } from './s3-atomic-puts';
import { startSqsEmulator } from './sqs';

/**
 * DynamoDB (dynalite), S3 (s3rver) and SQS (our own, see sqs/README.md) on 127.0.0.1, each
 * persisting under dataDir so tables, objects and queued messages survive a restart. Port 0 picks
 * a free port (tests); npm start asks for fixed ones only when the caller says so.
 */
export interface EmulatorPorts {
  dynamodb?: number;
  s3?: number;
  sqs?: number;
}

export interface Emulators {
  region: string;
  dynamodb: string;
  s3: string;
  sqs: string;
  /** Stops S3 only, so tests can show what the service does when its object store is down. */
  stopS3(): Promise<void>;
  startS3(): Promise<void>;
  close(): Promise<void>;
}

const host = '127.0.0.1';
/** How long the DynamoDB emulator keeps an idle client connection open. */
const KEEP_ALIVE_MS = 120_000;

/** Takes dataDir first (lockDataDir): throws DataDirInUse while another runtime has it open. */
export async function startEmulators(dataDir: string, ports: EmulatorPorts = {}): Promise<Emulators> {
  // Before anything opens a file: a second dynalite on the same files fails with "Database is
  // closed", and a second SQS emulator would fold the first one's log and free its held messages.
  const unlock = lockDataDir(dataDir);
  const opened: Array<() => Promise<void>> = [];
  try {
    const emulators = await openEmulators(dataDir, ports, opened);
    return {
      ...emulators,
      close: async () => {
        await emulators.close();
        unlock();
      },
    };
  } catch (error) {
    await Promise.allSettled(opened.map((close) => close()));
    unlock();
    throw error;
  }
}

/** Opens the emulators one by one, noting in `opened` how to close each, should a later one fail. */
async function openEmulators(dataDir: string, ports: EmulatorPorts, opened: Array<() => Promise<void>>): Promise<Emulators> {
  for (const dir of ['dynamodb', 's3', 'sqs']) mkdirSync(join(dataDir, dir), { recursive: true });

  const dynamo = dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  // Node's server closes a keep-alive connection after 5 s idle. A client that sends on it at
  // that moment gets ECONNRESET, and the SDK's retries can take the pool's other sockets, idle as
  // long: a burst of writes after a 5 s pause (the aggregator's marks after reading 100 objects)
  // failed that way. DynamoDB keeps idle connections far longer; so does the emulator.
  dynamo.keepAliveTimeout = KEEP_ALIVE_MS;
  dynamo.headersTimeout = KEEP_ALIVE_MS + 1000;
  const closeDynamo = () => closeServer(dynamo);
  opened.push(closeDynamo);
  const dynamoPort = await listen(dynamo, ports.dynamodb ?? 0);

  makeS3PutsAtomic();
  let s3: S3rver | undefined;
  let s3Port = ports.s3 ?? 0;
  const startS3 = async () => {
    s3 = new S3rver({ address: host, port: s3Port, silent: true, directory: join(dataDir, 's3') });
    // `silent` quiets only the console transport, which close() then removes: a response to a
    // connection cut by stopS3 still logs, and winston prints "Attempt to write logs with no
    // transports" to console.error. The logger itself is silenced so nothing reaches it at all.
    s3.logger.silent = true;
    const address = (await s3.run()) as AddressInfo;
    s3Port = address.port;
  };
  const stopS3 = async () => {
    await s3?.close();
    s3 = undefined;
  };
  opened.push(stopS3);
  // Once, before anything writes: a restart by stopS3/startS3 may have this process's writes in flight.
  await recoverS3Store(join(dataDir, 's3'));
  await startS3();

  const sqs = await startSqsEmulator({ host, port: ports.sqs ?? 0, dataDir: join(dataDir, 'sqs') });

  return {
    region: 'us-east-1',
    dynamodb: `http://${host}:${dynamoPort}`,
    s3: `http://${host}:${s3Port}`,
    sqs: sqs.url,
    stopS3,
    startS3,
    close: async () => {
      await Promise.all([stopS3(), sqs.close(), closeDynamo()]);
    },
  };
}

/**
 * DATA_DIR/runtime.lock holds the id of the process whose emulators have the directory open. A
 * lock whose process is gone (killed, or from before a reboot) is stale and taken over.
 */
const lockPath = (dataDir: string) => join(dataDir, 'runtime.lock');

export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`The data directory ${dataDir} is in use by npm start (pid ${pid}); stop it first, or set DATA_DIR to another directory`);
  }
}

/** Directories this process holds, by absolute path: its own pid in a lock file proves nothing alone. */
const held = new Set<string>();

/** The live process holding dataDir, if any. */
export function dataDirHolder(dataDir: string): number | undefined {
  const pid = lockedBy(dataDir);
  if (pid === undefined) return undefined;
  // Process ids are reused, after a reboot or a container restart most of all: a lock with this
  // process's id that this process did not take is an earlier process's.
  if (pid === process.pid) return held.has(absolute(dataDir)) ? pid : undefined;
  return isAlive(pid) ? pid : undefined;
}

/**
 * Takes dataDir (creating it) for this process, or throws DataDirInUse naming the process that
 * has it. Returns the release, which also runs if the process exits without calling it.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = absolute(dataDir);
  const file = lockPath(dataDir);
  mkdirSync(dataDir, { recursive: true });
  for (let attempt = 0; ; attempt++) {
    const holder = dataDirHolder(dataDir);
    if (holder !== undefined) throw new DataDirInUse(dataDir, holder);
    // A stale lock (checked just above) goes. The link fails if the file exists, and the file it
    // makes is complete from the start, so a reader never sees an empty lock. (Two processes taking
    // over one stale lock in the same instant could both succeed; npm start is typed by hand.)
    if (lockedBy(dataDir) !== undefined) rmSync(file, { force: true });
    const temp = `${file}.${process.pid}.${randomUUID()}`;
    writeFileSync(temp, `${process.pid}\n`);
    try {
      linkSync(temp, file);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
    } finally {
      rmSync(temp, { force: true });
    }
  }
  held.add(path);
  const release = () => {
    process.off('exit', release);
    if (!held.delete(path)) return;
    // Only our own lock: after a takeover (ours was judged stale) the file is someone else's.
    if (lockedBy(dataDir) === process.pid) rmSync(file, { force: true });
  };
  process.on('exit', release);
  return release;
}

function lockedBy(dataDir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(lockPath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  // An unreadable lock holds nothing; it is replaced like a stale one.
  return Number.isInteger(pid) && pid > 0 ? pid : -1;
}

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * A killed process whose parent died with it stays a zombie until it is reaped (seconds, in a
 * container whose init is slow to do it). It has let go of every file, so it holds nothing; only
 * Linux says so cheaply (/proc), and elsewhere orphans are reaped at once.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (command) state ...": the command may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}
