/**
 * What the SDK uses of React Native and the community modules, as small ports: the SDK never
 * imports them itself (except `start` in index.ts), so tests pass in-memory fakes that follow the
 * same documented APIs, and `test/module-types.ts` checks that the real modules' published types
 * fit these ports.
 */

/** A listener's handle, as React Native's `EventSubscription`. */
export interface Subscription {
  remove(): void;
}

/** `AppState` from 'react-native': `active`, `background`, `inactive` (iOS, between the two), and others. */
export interface AppStateModule {
  readonly currentState: string | null | undefined;
  addEventListener(type: 'change', listener: (state: string) => void): Subscription;
}

/** `Linking` from 'react-native': the URL that launched the app, and the URLs that reach it while it runs. */
export interface LinkingModule {
  getInitialURL(): Promise<string | null | undefined>;
  addEventListener(type: 'url', listener: (event: { url: string }) => void): Subscription;
}

/** The default export of @react-native-async-storage/async-storage. */
export interface AsyncStorageModule {
  getItem(key: string): Promise<string | null>;
  setItem(key: string, value: string): Promise<void>;
  removeItem(key: string): Promise<void>;
}

/** What react-native-play-install-referrer's `getInstallReferrerInfo` calls back with (times in seconds). */
export interface PlayInstallReferrerInfo {
  readonly installReferrer: string | null;
  readonly referrerClickTimestampSeconds: number;
  readonly installBeginTimestampSeconds: number;
}

/** `PlayInstallReferrer` from react-native-play-install-referrer (Android only). */
export interface PlayInstallReferrerModule {
  getInstallReferrerInfo(callback: (info: PlayInstallReferrerInfo | null, error: { message: string } | null) => void): void;
}

/** What the SDK reads of a `fetch` answer. */
export interface FetchResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** React Native's global `fetch`, as far as the SDK calls it (the signal is an AbortController's). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: Uint8Array; signal?: unknown },
) => Promise<FetchResponse>;
