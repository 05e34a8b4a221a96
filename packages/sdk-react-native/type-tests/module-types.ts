/**
 * Type-level checks, compiled by `npm run typecheck` (this package's tsconfig.json, where React Native's global types are
 * declared as in an app: not in test/tsconfig.json, whose Node globals they contradict) and never run: the real
 * modules' published types must fit the ports the SDK takes (src/modules.ts), so the fakes the
 * tests use, typed by the same ports, cannot drift from what apps pass in.
 */
import type AsyncStorage from '@react-native-async-storage/async-storage';
import type { AppState, Linking } from 'react-native';
import type { PlayInstallReferrer } from 'react-native-play-install-referrer';
import type { AppStateModule, AsyncStorageModule, FetchLike, LinkingModule, PlayInstallReferrerModule } from '../src/modules';

export const appState: AppStateModule = {} as typeof AppState;
export const linking: LinkingModule = {} as typeof Linking;
export const asyncStorage: AsyncStorageModule = {} as typeof AsyncStorage;
export const installReferrer: PlayInstallReferrerModule = {} as typeof PlayInstallReferrer;
// React Native's global fetch takes what the SDK sends (the signal is an AbortController's).
export const reactNativeFetch: FetchLike = (url, init) => fetch(url, { ...init, signal: init.signal as AbortSignal });
