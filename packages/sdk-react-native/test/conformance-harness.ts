import { randomUUID } from 'node:crypto';
import type { FetchLike } from '../src/modules';
import { type ReactNativeAttribution, ReactNativeAttribution as Sdk } from '../src/react-native-sdk';
import { FakeAppState, FakeAsyncStorage, FakeLinking } from './fakes';

/**
 * What the conformance kit gives an SDK under test (docs/sdk-protocol.md, "The conformance kit").
 * `companyKey` is required: the service refuses a request without its X-Service-Company-Key.
 */
export interface ConformanceContext {
  readonly baseUrl: string;
  readonly companyKey: string;
  readonly appKey: string;
  readonly signingSecret: string;
  /** Track this many `conformance_event`s, with params { seq: i }. */
  readonly events: number;
  /** Kill the app mid-send and relaunch it over the same AsyncStorage this many times. */
  readonly restarts: number;
  readonly fetch?: typeof fetch;
  /** Start requiring consent, and grant it (after mark('consent')) once everything is tracked. */
  readonly requireConsent?: boolean;
  mark?(name: 'consent' | 'restart'): void;
  /** Aborted when the kit gives up on the run: the app stops and run() rejects. */
  readonly signal?: AbortSignal;
}

/** How long run() waits for the queue to empty before it throws. */
const DRAIN_TIMEOUT_MS = 120_000;
/** How long a process waits for a send to kill it in the middle of before it is killed anyway. */
const SEND_WAIT_MS = 5_000;

/**
 * The React Native SDK as an SDK under test for the conformance kit: the package's own code
 * (ReactNativeAttribution with its AsyncStorage, AppState and Linking adapters) on the in-memory
 * modules of fakes.ts, in Node, with real timers and a real fetch, so the kit's checking proxy
 * sees its real traffic. A fresh install each run; AsyncStorage's contents outlive each kill,
 * the process's memory, timers, listeners and unanswered requests do not.
 */
export const reactNativeHarness = {
  name: 'react-native',
  capabilities: { consent: true, abort: true },
  async run(ctx: ConformanceContext): Promise<void> {
    const storage = new FakeAsyncStorage();
    const fetchImpl = ctx.fetch ?? fetch;
    let generation = 0;
    let sendStarted: () => void = () => undefined;

    const launch = (): Promise<ReactNativeAttribution> => {
      const mine = ++generation;
      const alive = () => mine === generation;
      // A dead process hears no answer, and its timers would send nothing more (it is stopped).
      const network: FetchLike = async (url, init) => {
        if (url.endsWith('/event')) sendStarted();
        const response = await fetchImpl(url, { ...init, body: init.body as RequestInit['body'], signal: init.signal as AbortSignal });
        if (!alive()) throw new Error('the app was killed before the answer came');
        return response;
      };
      return Sdk.start(
        {
          baseUrl: ctx.baseUrl,
          companyKey: ctx.companyKey,
          appKey: ctx.appKey,
          signingSecret: ctx.signingSecret,
          appVersion: '1.0.0',
          batchSize: 10,
          flushIntervalMs: 100,
          backoff: { baseMs: 50, maxMs: 400 },
          requireConsent: ctx.requireConsent === true,
        },
        {
          os: 'android',
          appState: new FakeAppState(),
          linking: new FakeLinking(),
          asyncStorage: storage.process(alive),
          fetch: network,
          randomUuid: randomUUID,
        },
      );
    };

    /** Kills the app once a batch is on the wire (or after SEND_WAIT_MS), a random few ms into it. */
    const killMidSend = async (app: ReactNativeAttribution) => {
      const started = new Promise<void>((resolve) => {
        sendStarted = resolve;
      });
      void app.flush();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([started, new Promise<void>((resolve) => (timer = setTimeout(resolve, SEND_WAIT_MS)))]);
      clearTimeout(timer);
      await sleep(Math.floor(Math.random() * 5));
      generation++;
      app.stop();
    };

    let app = await launch();
    const share = Math.ceil(ctx.events / (ctx.restarts + 1));
    for (let seq = 0, restart = 0; seq < ctx.events || restart < ctx.restarts; ) {
      for (const end = Math.min(ctx.events, seq + share); seq < end; seq++) await app.track('conformance_event', { params: { seq } });
      if (restart++ >= ctx.restarts) break;
      await killMidSend(app);
      ctx.mark?.('restart');
      app = await launch();
    }
    if (ctx.requireConsent) {
      ctx.mark?.('consent');
      await app.setConsent(true);
    }
    const until = Date.now() + DRAIN_TIMEOUT_MS;
    try {
      while (app.diagnostics().queued > 0) {
        if (ctx.signal?.aborted) throw new Error('react-native harness: aborted by the kit with events still queued');
        if (Date.now() > until)
          throw new Error(`react-native harness: ${app.diagnostics().queued} events still queued after ${DRAIN_TIMEOUT_MS} ms`);
        await sleep(20);
      }
    } finally {
      app.stop();
    }
  },
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
