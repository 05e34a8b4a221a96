/**
 * What needs native code this package does not ship, passed in by the app from a module it
 * already uses (docs/sdk.md, "React Native and Expo", has a recipe for each). Every provider is
 * optional, asked with a time limit, and anything it answers that the service would refuse is
 * left out rather than sent.
 */

/** The App Tracking Transparency status (iOS), or on Android whether ad tracking is allowed. */
export type TrackingStatus = 'authorized' | 'denied' | 'restricted' | 'not_determined';

/** The advertising id (IDFA, GAID) and whether the user allows tracking. */
export interface TrackingProvider {
  status(): Promise<TrackingStatus>;
  advertisingId(): Promise<string | null | undefined>;
}

export type CoarseConversionValue = 'low' | 'medium' | 'high';

/** One SKAdNetwork 4 / AdAttributionKit conversion-value update, as Apple's APIs take it. */
export interface ConversionValueUpdate {
  /** 0 to 63; Apple reads it in the first window only. */
  readonly fineValue: number;
  readonly coarseValue?: CoarseConversionValue;
  /** Ends the window now: Apple sends its postback early and takes no later value for it. */
  readonly lockWindow?: boolean;
}

export interface Providers {
  /** ATT status and IDFA (iOS), or GAID and its limit-ad-tracking flag (Android). */
  readonly tracking?: TrackingProvider;
  /** Apple's AdServices token (`AAAttribution.attributionToken()`, iOS 14.3+), read at the first launch. */
  readonly adServicesToken?: () => Promise<string | null | undefined>;
  /** Calls Apple's `updatePostbackConversionValue` (SKAdNetwork) and/or `Postback.updateConversionValue` (AdAttributionKit). */
  readonly updateConversionValue?: (update: ConversionValueUpdate) => Promise<void>;
}

/** IDFA and GAID read as zeros when the user does not allow tracking: that is no id. */
const ZEROS = /^[0-]+$/;
/** The interface's `device_id`: 1 to 128 characters (docs/ingestion.md). */
export const advertisingIdOf = (status: TrackingStatus, id: string | null | undefined): string | undefined =>
  status === 'authorized' && typeof id === 'string' && id.length > 0 && id.length <= 128 && !ZEROS.test(id) ? id : undefined;

/** The install event's `attribution.adservices_token` rule (docs/ingestion.md): else the install event would be refused whole. */
export const adServicesTokenOf = (token: string | null | undefined): string | undefined =>
  typeof token === 'string' && token.length > 0 && token.length <= 4_096 && /^[A-Za-z0-9+/=_-]+$/.test(token) ? token : undefined;

/** Checks an update before it reaches Apple's API, which would take a wrong value silently or crash. */
export function checkedConversionValue(update: ConversionValueUpdate): ConversionValueUpdate {
  if (!Number.isInteger(update?.fineValue) || update.fineValue < 0 || update.fineValue > 63) {
    throw new RangeError('bad_conversion_value: fineValue must be an integer from 0 to 63');
  }
  if (update.coarseValue !== undefined && !['low', 'medium', 'high'].includes(update.coarseValue)) {
    throw new RangeError("bad_conversion_value: coarseValue must be 'low', 'medium' or 'high'");
  }
  if (update.lockWindow !== undefined && typeof update.lockWindow !== 'boolean') {
    throw new RangeError('bad_conversion_value: lockWindow must be a boolean');
  }
  return update;
}
