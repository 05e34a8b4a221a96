import AsyncStorage from '@react-native-async-storage/async-storage';
import { AppState, Linking, Platform } from 'react-native';
import { ReactNativeAttribution, type ReactNativeConfig, type ReactNativeModules } from './react-native-sdk.js';

export type { ConsentDetails, Diagnostics, FirstLaunchAnswer, PurchaseRefund, RejectedEvent, TrackOptions } from '@attribution/sdk-core';
export type { DeepLink } from './deep-link.js';
export { useAttribution, useDeepLink } from './hooks.js';
export type { AppStateModule, AsyncStorageModule, FetchLike, LinkingModule, PlayInstallReferrerModule } from './modules.js';
export type { CoarseConversionValue, ConversionValueUpdate, Providers, TrackingProvider, TrackingStatus } from './providers.js';
export { REACT_NATIVE_SDK_VERSION, ReactNativeAttribution, type ReactNativeConfig, type ReactNativeModules } from './react-native-sdk.js';

/**
 * Starts the SDK on React Native's AppState, Linking and Platform and on AsyncStorage
 * (docs/sdk.md, "React Native and Expo"). Pass `installReferrer: PlayInstallReferrer` (from
 * react-native-play-install-referrer) for the deterministic Android match.
 */
export function start(
  config: ReactNativeConfig,
  modules: Partial<Omit<ReactNativeModules, 'os' | 'appState' | 'linking' | 'asyncStorage'>> = {},
): Promise<ReactNativeAttribution> {
  if (Platform.OS !== 'ios' && Platform.OS !== 'android')
    throw new Error(`unsupported platform ${Platform.OS}: use @attribution/sdk-web on the web`);
  return ReactNativeAttribution.start(config, {
    os: Platform.OS,
    appState: AppState,
    linking: Linking,
    asyncStorage: AsyncStorage,
    ...modules,
  });
}
