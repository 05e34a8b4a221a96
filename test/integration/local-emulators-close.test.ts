// The local emulators close at once with a client's connection still open: the DynamoDB emulator
// keeps an idle connection 120 s (local/emulators.ts, KEEP_ALIVE_MS), and a close() that waited for
// it held a runtime's stop for 125 s (console-pages' shell suite, which stops the runtime mid-test).

import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulators } from '../../local/emulators';

/** A client's socket, connected and left open; resolves when the server has cut it. */
async function openSocket(endpoint: string): Promise<{ socket: Socket; cut: Promise<void> }> {
  const { hostname, port } = new URL(endpoint);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  return { socket, cut: new Promise<void>((resolve) => socket.once('close', () => resolve())) };
}

it("cuts the clients' open connections when it closes, instead of waiting for them to time out", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'attribution-emulators-close-'));
  try {
    const emulators = await startEmulators(dataDir);
    // One connection that has made a request and is kept alive, one that never sent a byte.
    const used = await openSocket(emulators.dynamodb);
    used.socket.write(`GET / HTTP/1.1\r\nHost: ${new URL(emulators.dynamodb).host}\r\nConnection: keep-alive\r\n\r\n`);
    await new Promise<void>((resolve) => used.socket.once('data', () => resolve()));
    const silent = await openSocket(emulators.dynamodb);
    // Well under the emulator's 120 s keep-alive: only closing the idle one and cutting the unused one lets close() finish in time.
    await emulators.close();
    await Promise.all([used.cut, silent.cut]);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 30_000);
