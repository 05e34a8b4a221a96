// Durability of the SQS emulator's state under a data directory: a snapshot (`sqs.json`) and an
// append-only change log (`sqs.log`). Every change is appended to the log before the request that
// made it is answered; the log is folded into the snapshot on start, on close and when it grows
// large. A record cut short by a kill mid-write is dropped on replay (its request was never
// answered). Only one emulator may use a dataDir at a time (the local runtime's lock, lockDataDir
// in local/emulators.ts, sees to it).

import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, ftruncateSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredMessage } from './store';

export interface JournalLogger {
  info(message: string): void;
  error(message: string): void;
}

const STATE_FILE = 'sqs.json';
const JOURNAL_FILE = 'sqs.log';
const STATE_VERSION = 1;
// Past this size the change log is folded into the snapshot, so a restart replays little.
const COMPACT_JOURNAL_BYTES = 32 * 1024 * 1024;

/** A queue as the snapshot holds it. */
export interface PersistedQueue {
  name: string;
  createdAt: number;
  lastModifiedAt: number;
  attributes: Record<string, string>;
  messages: StoredMessage[];
}

interface PersistedState {
  version: number;
  savedAt: number;
  queues: PersistedQueue[];
}

/**
 * One line of the change log. Each record is a whole value (a queue's metadata, a message as it now
 * is) or a removal, never a delta, so replaying a log over a snapshot that already holds some of
 * it gives the same state: a crash between writing the snapshot and emptying the log is harmless.
 */
export type JournalRecord =
  | { op: 'queue'; name: string; createdAt: number; lastModifiedAt: number; attributes: Record<string, string> }
  | { op: 'drop'; queue: string }
  | { op: 'purge'; queue: string }
  | { op: 'put'; queue: string; message: StoredMessage }
  | { op: 'del'; queue: string; id: string };

export class Journal {
  private readonly stateFile: string;
  readonly file: string;
  /** Change-log lines made since the last commit; written before the next answer goes out. */
  private pending: string[] = [];
  private commitScheduled = false;
  private journalFd: number | undefined;
  private journalBytes = 0;

  constructor(
    private readonly dataDir: string,
    private readonly now: () => number,
    /** The whole state as it is now, for the snapshot. */
    private readonly snapshot: () => PersistedQueue[],
    private readonly logger: JournalLogger | undefined,
  ) {
    this.stateFile = join(dataDir, STATE_FILE);
    this.file = join(dataDir, JOURNAL_FILE);
  }

  /** The queues of the last snapshot (none on a first start). */
  async load(): Promise<PersistedQueue[]> {
    await mkdir(this.dataDir, { recursive: true });
    const file = this.stateFile;
    const text = await readIfExists(file);
    if (text === undefined) return [];
    // A corrupt file is reported rather than silently replaced: it holds someone's queued work.
    const state = JSON.parse(text) as PersistedState;
    if (state.version !== STATE_VERSION || !Array.isArray(state.queues)) {
      throw new Error(`Unsupported SQS emulator state in ${file} (version ${String(state.version)})`);
    }
    const messageCount = state.queues.reduce((sum, queue) => sum + queue.messages.length, 0);
    this.logger?.info(`SQS emulator restored ${state.queues.length} queue(s) with ${messageCount} message(s) from ${file}`);
    return state.queues;
  }

  /** Applies every whole record of the change log, in order. */
  async replay(apply: (record: JournalRecord) => void): Promise<void> {
    const file = this.file;
    const text = await readIfExists(file);
    if (text === undefined) return;
    const lines = text.split('\n');
    // The text after the last newline is a record cut short by a kill mid-write: its request was
    // never answered, so it is dropped. Any other unreadable line means the log is corrupt.
    lines.pop();
    for (const [index, line] of lines.entries()) {
      let record: JournalRecord;
      try {
        record = JSON.parse(line) as JournalRecord;
      } catch {
        throw new Error(`Corrupt SQS emulator change log ${file} at line ${index + 1}`);
      }
      apply(record);
    }
    if (lines.length > 0) this.logger?.info(`SQS emulator replayed ${lines.length} change(s) from ${file}`);
  }

  /** Notes a change for the log; it is written (commit) before the answer that reports it. */
  record(record: JournalRecord): void {
    // Serialised now: the message object keeps changing after this point.
    this.pending.push(JSON.stringify(record));
    // A change no answer follows (a retention sweep) still reaches the log within a tick.
    if (!this.commitScheduled) {
      this.commitScheduled = true;
      setImmediate(() => {
        this.commitScheduled = false;
        try {
          this.commit();
        } catch (error) {
          this.logger?.error(`SQS emulator failed to log changes to ${this.file}: ${String(error)}`);
        }
      });
    }
  }

  /**
   * Appends every pending change in one write. Once write() has returned the bytes belong to the
   * kernel, so they survive the process being killed (kill -9 included); an fsync per answer would
   * also cover a machine crash, at milliseconds per request, which a local emulator does not need.
   * Changes of the same tick share the write, which is what keeps a burst of sends cheap.
   */
  commit(): void {
    if (this.pending.length === 0 || this.journalFd === undefined) return;
    const bytes = Buffer.from(`${this.pending.join('\n')}\n`, 'utf8');
    let written = 0;
    while (written < bytes.length) written += writeSync(this.journalFd, bytes, written);
    this.pending = [];
    this.journalBytes += bytes.length;
    if (this.journalBytes > COMPACT_JOURNAL_BYTES) this.compact();
  }

  /**
   * Writes the whole state as the snapshot (temp file + fsync + rename: a crash leaves the old or
   * the new file, never a torn one) and only then empties the log.
   */
  compact(): void {
    this.pending = [];
    const state: PersistedState = { version: STATE_VERSION, savedAt: this.now(), queues: this.snapshot() };
    const temp = `${this.stateFile}.${process.pid}.${randomUUID()}.tmp`;
    try {
      const fd = openSync(temp, 'w');
      try {
        writeFileSync(fd, JSON.stringify(state));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, this.stateFile);
    } catch (error) {
      rmSync(temp, { force: true });
      this.logger?.error(`SQS emulator failed to persist state to ${this.stateFile}: ${String(error)}`);
      throw error;
    }
    this.journalFd ??= openSync(this.file, 'a');
    ftruncateSync(this.journalFd);
    this.journalBytes = 0;
  }

  /** Writes the snapshot and closes the log. */
  close(): void {
    this.compact();
    if (this.journalFd !== undefined) closeSync(this.journalFd);
    this.journalFd = undefined;
  }
}

/** A file's text, or undefined when there is none yet (a first start). */
async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
