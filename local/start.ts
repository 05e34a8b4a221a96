import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { startAdServicesStub } from './adservices-stub';
import { consoleBanner, demoConsoleUser } from './console-demo';
import { DataDirInUse, dataDirHolder } from './emulators';
import { dataDirFromEnv } from './environment';
import { type Runtime, startRuntime } from './runtime';
import { demoCurls } from './seed';

const host = '127.0.0.1';

/** A reason not to start, said in one line: the user's setting is wrong, not the code. */
class Refusal extends Error {}

/** `npm start`: the whole service on 127.0.0.1:${PORT:-3000}, data under ${DATA_DIR:-.data}. */
async function main(): Promise<void> {
  const started = Date.now();
  // The handlers come first: a Ctrl-C that lands before they exist (during start-up, or between the
  // banner and the line that would add them) kills the process outright, emulators unflushed and
  // endpoints.json left behind. One during start-up stops the runtime as soon as it has started.
  const signals = stopSignals();
  const dataDir = dataDirFromEnv();
  const port = portFromEnv();
  // Both checks come before anything is made, so a refused start leaves DATA_DIR as it was. The
  // directory first: typed twice, npm start finds the port taken too, but the running copy is the news.
  const holder = dataDirHolder(dataDir);
  if (holder !== undefined) throw new DataDirInUse(dataDir, holder);
  await assertPortFree(port);

  const existed = existsSync(dataDir);
  // Apple's attribution API, locally: tokens of the stub's convention (local/adservices-stub.ts) get its answers.
  const adServices = await startAdServicesStub(host);
  let runtime: Runtime;
  try {
    runtime = await startRuntime({
      dataDir,
      port,
      host,
      trustProxy: process.env.TRUST_PROXY === '1',
      seed: true,
      internet: { ADSERVICES_API_URL: adServices.url },
      consolePort: consolePortFromEnv(),
    });
  } catch (error) {
    await adServices.close();
    // Taken between the check and the start, or another failure: a first start leaves no half-made directory.
    if (!existed) rmSync(dataDir, { recursive: true, force: true });
    throw (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? portInUse(port) : error;
  }

  signals.onStop((signal) => {
    console.log(`\n${signal}: stopping, flushing data to ${dataDir}`);
    Promise.all([runtime.close(), adServices.close()]).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });

  const { demo } = runtime;
  console.log(`attribution service listening on ${runtime.baseUrl} (data in ${dataDir}, ready in ${Date.now() - started} ms)`);
  if (process.env.TRUST_PROXY === '1') console.log('TRUST_PROXY=1: client addresses are taken from X-Forwarded-For');
  if (runtime.endpoints.postback_allow_loopback) {
    console.log('POSTBACK_ALLOW_LOOPBACK=1: postbacks may go to http://127.0.0.1 (local only), and `admin postback set` accepts such URLs');
  }
  if (demo) {
    console.log(runtime.demoCreated ? '\nDemo tenant created (also in demo.json):' : '\nDemo tenant (from demo.json):');
    console.log(JSON.stringify(demo, null, 2));
    console.log(`\nTry it:\n${demoCurls(demo, runtime.baseUrl)}\n`);
    // A signal while the console starts stops it (runtime.close): the stop goes on, with no banner.
    const site = await runtime.consoleReady.catch((error: unknown) => {
      if (signals.received() === undefined) throw error;
      return undefined;
    });
    if (site) console.log(`${consoleBanner(site.url, await demoConsoleUser(dataDir, demo.company_id))}\n`);
  }
}

/**
 * Takes SIGINT and SIGTERM from the first line of `main`. The first signal is kept until `onStop`
 * is given what to do, then done once; a second signal changes nothing.
 */
function stopSignals(): { onStop(stop: (signal: string) => void): void; received(): string | undefined } {
  let received: string | undefined;
  let stop: ((signal: string) => void) | undefined;
  const take = (signal: string) => {
    if (received !== undefined) return;
    received = signal;
    stop?.(signal);
  };
  process.on('SIGINT', () => take('SIGINT'));
  process.on('SIGTERM', () => take('SIGTERM'));
  return {
    received: () => received,
    onStop(then) {
      stop = then;
      if (received !== undefined) then(received);
    },
  };
}

/** The console with sign-in (local/console-site.ts): CONSOLE_SITE_PORT, or a free port, which the banner prints. */
function consolePortFromEnv(): number {
  const value = process.env.CONSOLE_SITE_PORT || '0';
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new Refusal(`CONSOLE_SITE_PORT must be a port number (0 to 65535), not "${value}"`);
  return port;
}

function portFromEnv(): number {
  const value = process.env.PORT || '3000';
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new Refusal(`PORT must be a port number (0 to 65535), not "${value}"`);
  return port;
}

const portInUse = (port: number) =>
  new Refusal(`Port ${port} is in use; set PORT to another port (PORT=${port + 100 <= 65535 ? port + 100 : 3000} npm start)`);

/** Binds the port for a moment, as the runtime will, and says in one line why it cannot. */
async function assertPortFree(port: number): Promise<void> {
  const problem = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const server = createServer();
    server.once('error', resolve);
    server.listen(port, host, () => server.close(() => resolve(undefined)));
  });
  if (problem?.code === 'EADDRINUSE') throw portInUse(port);
  if (problem?.code === 'EACCES')
    throw new Refusal(`Port ${port} needs privileges this user does not have; set PORT to another port (PORT=3000 npm start)`);
  if (problem) throw problem;
}

main().catch((error: unknown) => {
  // A refusal is the whole message; anything else is a fault worth its stack trace.
  console.error(error instanceof Refusal || error instanceof DataDirInUse ? error.message : error);
  process.exit(1);
});
