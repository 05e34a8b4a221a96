import type { FirstLaunchAnswer } from '@attribution/sdk-core';
import { useSyncExternalStore } from 'react';
import type { DeepLink, Observed } from './deep-link.js';
import type { ReactNativeAttribution } from './react-native-sdk.js';

const nothing = () => () => undefined;
const none = () => undefined;

function useObserved<T>(observed: Observed<T> | undefined): T | undefined {
  return useSyncExternalStore(observed?.subscribe ?? nothing, observed?.get ?? none, observed?.get ?? none);
}

/** The first-launch answer (where the install came from), undefined until the service gives it; re-renders when it comes. */
export function useAttribution(sdk: ReactNativeAttribution | undefined): FirstLaunchAnswer | undefined {
  return useObserved(sdk?.attribution);
}

/** The last deep link to open (deferred, or a link that opened the running app); re-renders at each. */
export function useDeepLink(sdk: ReactNativeAttribution | undefined): DeepLink | undefined {
  return useObserved(sdk?.deepLink);
}
