export type {
  AdRevenueImpression,
  ConsentDetails,
  Diagnostics,
  FirstLaunchAnswer,
  PurchaseRefund,
  RejectedEvent,
  TrackOptions,
} from '@attribution/sdk-core';
// A function, not a WebSdk method, so that the script-tag build leaves it out (docs/sdk.md, "Refunds"): `trackRefund(sdk, refund)`.
export { trackRefund } from '@attribution/sdk-core';
export type { Landing } from './landing.js';
export { KEEPALIVE_MAX_BYTES } from './network.js';
export { WEB_SDK_VERSION, WebSdk, type WebSdkConfig } from './web-sdk.js';

import { WebSdk, type WebSdkConfig } from './web-sdk.js';

/** Starts the web SDK on this page (docs/sdk.md, "The web SDK"). */
export const start = (config: WebSdkConfig): Promise<WebSdk> => WebSdk.start(config);
