export { type BackoffPolicy, backoffMs, DEFAULT_BACKOFF, retryAfterMs } from './backoff.js';
export type { HttpRequest, HttpResponse, NetworkPort, PlatformPort, SchedulerPort, StoragePort } from './ports.js';
export {
  AD_REVENUE_EVENT,
  type AdRevenueImpression,
  type Choices,
  type Diagnostics,
  linkOf,
  measures,
  type Ports,
  type PurchaseRefund,
  REFUND_EVENT,
  type RejectedEvent,
  SDK_VERSION,
  Sdk,
  type SdkConfig,
  STATE_KEY,
  type TrackedEvent,
  type TrackOptions,
  trackRefund,
} from './sdk.js';
export { type Credentials, HEADERS, signature, signedBody } from './signing.js';
export {
  type CoarseValue,
  chosenValues,
  type PostbackWindow,
  SCHEMA_MAX_AGE_MS,
  type SkanHook,
  type SkanPort,
  type SkanSchema,
  type SkanState,
  type SkanUpdate,
  type SkanWindowState,
  skanConversions,
  windowOf,
} from './skan.js';
export {
  type ConsentDetails,
  DEFAULT_BOUNDS,
  type FirstLaunchAnswer,
  type InstallSignals,
  type QueueBounds,
  type QueuedEvent,
  type SdkState,
} from './state.js';
