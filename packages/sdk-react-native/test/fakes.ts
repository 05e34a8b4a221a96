import { randomUUID } from 'node:crypto';
import type { NetworkPort } from '@attribution/sdk-core';
import { CREDENTIALS, World } from '../../sdk-core/test/world';
import type {
  AppStateModule,
  AsyncStorageModule,
  FetchLike,
  LinkingModule,
  PlayInstallReferrerInfo,
  PlayInstallReferrerModule,
  Subscription,
} from '../src/modules';
import { ReactNativeAttribution, type ReactNativeConfig, type ReactNativeModules } from '../src/react-native-sdk';

/**
 * In-memory stand-ins for the community modules, following their documented APIs (and typed by
 * the same ports the real modules are checked against in module-types.ts): AsyncStorage's
 * getItem/setItem/removeItem with null for a missing key, AppState's `currentState` and `change`
 * events, Linking's getInitialURL and `url` events, and Play's referrer callback. Shared by every
 * test of the package and by the conformance harness.
 */

/** One listener list with React Native's subscription handles. */
class Listeners<T> {
  readonly all = new Set<(value: T) => void>();
  add(listener: (value: T) => void): Subscription {
    this.all.add(listener);
    return { remove: () => this.all.delete(listener) };
  }
  emit(value: T): void {
    for (const listener of [...this.all]) listener(value);
  }
}

/** The device's disk under AsyncStorage: it outlives the app's process; a dead process writes nothing more. */
export class FakeAsyncStorage {
  readonly disk = new Map<string, string>();
  /** The storage one process sees: once `alive()` is false its writes are lost, as a killed app's are. */
  process(alive: () => boolean = () => true): AsyncStorageModule {
    return {
      getItem: async (key) => this.disk.get(key) ?? null,
      setItem: async (key, value) => {
        if (alive()) this.disk.set(key, value);
      },
      removeItem: async (key) => {
        if (alive()) this.disk.delete(key);
      },
    };
  }
}

export class FakeAppState implements AppStateModule {
  currentState: string | null | undefined = 'active';
  private readonly listeners = new Listeners<string>();
  addEventListener(_type: 'change', listener: (state: string) => void): Subscription {
    return this.listeners.add(listener);
  }
  set(state: string): void {
    this.currentState = state;
    this.listeners.emit(state);
  }
  /** The process died: its listeners went with it. */
  clear(): void {
    this.listeners.all.clear();
  }
}

export class FakeLinking implements LinkingModule {
  /** The URL that launches the app next (null: launched from the home screen). */
  initialURL: string | null = null;
  private readonly listeners = new Listeners<{ url: string }>();
  async getInitialURL(): Promise<string | null> {
    return this.initialURL;
  }
  addEventListener(_type: 'url', listener: (event: { url: string }) => void): Subscription {
    return this.listeners.add(listener);
  }
  /** A link opens the running app. */
  open(url: string): void {
    this.listeners.emit({ url });
  }
  clear(): void {
    this.listeners.all.clear();
  }
  listening(): number {
    return this.listeners.all.size;
  }
}

/** Play's referrer module: answers `info` or `error`, or never calls back (`'never'`). */
export function fakeInstallReferrer(answer: PlayInstallReferrerInfo | { message: string } | 'never'): PlayInstallReferrerModule {
  return {
    getInstallReferrerInfo: (callback) => {
      if (answer === 'never') return;
      if ('message' in answer) callback(null, answer);
      else callback(answer, null);
    },
  };
}

/** `fetch` over an in-memory service's network port, so the SDK's own fetch adapter is what is tested. */
export function fetchOver(network: NetworkPort): FetchLike {
  return async (url, init) => {
    const answer = await network({
      url,
      method: init.method === 'GET' ? 'GET' : 'POST',
      headers: init.headers,
      body: init.body,
      timeoutMs: 30_000,
    });
    return { status: answer.status, headers: { get: (name) => answer.headers[name.toLowerCase()] ?? null }, text: async () => answer.body };
  };
}

export const BASE_URL = 'https://api.example.com';

/**
 * A phone running the app against the core's in-memory service (packages/sdk-core/test/world.ts:
 * virtual time, signatures checked with node:crypto, each event_id stored once): `launch` starts
 * a process, `kill` ends it at once (no more writes, answers lost, timers and listeners gone).
 */
export class Phone {
  readonly world = new World();
  readonly storage = new FakeAsyncStorage();
  readonly appState = new FakeAppState();
  readonly linking = new FakeLinking();
  app?: ReactNativeAttribution;

  async launch(config: Partial<ReactNativeConfig> = {}, modules: Partial<ReactNativeModules> = {}): Promise<ReactNativeAttribution> {
    const ports = this.world.ports();
    const generation = this.world.generation;
    const starting = ReactNativeAttribution.start(
      { ...CREDENTIALS, baseUrl: BASE_URL, appVersion: '1.0.0', ...config },
      {
        os: 'android',
        appState: this.appState,
        linking: this.linking,
        asyncStorage: this.storage.process(() => generation === this.world.generation),
        fetch: fetchOver(ports.network),
        scheduler: ports.scheduler,
        randomUuid: randomUUID,
        ...modules,
      },
    );
    // Virtual time runs while it starts (a provider that never answers is waited for until its timeout).
    let started = false;
    const done = () => {
      started = true;
    };
    starting.then(done, done);
    while (!started) await this.world.advance(100);
    this.app = await starting;
    return this.app;
  }

  kill(): void {
    this.world.crash();
    this.appState.clear();
    this.linking.clear();
    this.linking.initialURL = null;
    this.app = undefined;
  }

  /** The events the service stored with this name. */
  stored(name: string) {
    return this.world.stored.filter((event) => event.event_name === name);
  }
}
