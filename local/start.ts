import { startRuntime } from './runtime';
import { dataDirFromEnv } from './environment';
import { demoCurls } from './seed';

/** `npm start`: the whole service on 127.0.0.1:${PORT:-3000}, data under ${DATA_DIR:-.data}. */
async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = dataDirFromEnv();
  const port = Number(process.env.PORT ?? 3000);
  const runtime = await startRuntime({
    dataDir,
    port,
    trustProxy: process.env.TRUST_PROXY === '1',
    seed: true,
  });

  const { demo } = runtime;
  console.log(`attribution service listening on ${runtime.baseUrl} (data in ${dataDir}, ready in ${Date.now() - started} ms)`);
  if (process.env.TRUST_PROXY === '1') console.log('TRUST_PROXY=1: client addresses are taken from X-Forwarded-For');
  if (demo) {
    console.log(runtime.demoCreated ? '\nDemo tenant created (also in demo.json):' : '\nDemo tenant (from demo.json):');
    console.log(JSON.stringify(demo, null, 2));
    console.log(`\nTry it:\n${demoCurls(demo, runtime.baseUrl)}\n`);
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping, flushing data to ${dataDir}`);
    runtime.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
