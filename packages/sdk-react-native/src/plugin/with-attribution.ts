import {
  AndroidConfig,
  type ConfigPlugin,
  type InfoPlist,
  withAndroidManifest,
  withEntitlementsPlist,
  withInfoPlist,
} from '@expo/config-plugins';
import { type AttributionPluginOptions, type CheckedOptions, checkedOptions } from './options.js';

type IntentFilter = AndroidConfig.Manifest.ManifestIntentFilter;
/** The entitlements plist as withEntitlementsPlist hands it over (@expo/json-file's JSONObject, named without depending on that package). */
type Entitlements = Parameters<Parameters<typeof withEntitlementsPlist>[1]>[0]['modResults'];

export const ASSOCIATED_DOMAINS = 'com.apple.developer.associated-domains';
/** SKAdNetwork (and Private Click Measurement): where Apple sends the developer's copy of the winning postback. */
export const SKAN_REPORT_ENDPOINT = 'NSAdvertisingAttributionReportEndpoint';
/** AdAttributionKit's key for the same copy (iOS 17.4+). */
export const ADATTRIBUTIONKIT_COPY_ENDPOINT = 'AttributionCopyEndpoint';

/**
 * The Expo config plugin: Universal Links (the associated-domains entitlement), App Links (verified
 * intent filters on the main activity) for each link domain, and the postback copy endpoints in
 * Info.plist. Every change is a merge: applied twice, or over entries of the app's own, it adds
 * nothing twice.
 */
export const withAttribution: ConfigPlugin<AttributionPluginOptions> = (config, options) => {
  const checked = checkedOptions(options);
  config = withEntitlementsPlist(config, (mod) => {
    mod.modResults = withAssociatedDomains(mod.modResults, checked);
    return mod;
  });
  config = withInfoPlist(config, (mod) => {
    mod.modResults = withReportEndpoints(mod.modResults, checked);
    return mod;
  });
  return withAndroidManifest(config, (mod) => {
    const activity = AndroidConfig.Manifest.getMainActivityOrThrow(mod.modResults);
    activity['intent-filter'] = withAppLinks(activity['intent-filter'] ?? [], checked);
    return mod;
  });
};

export function withAssociatedDomains(entitlements: Entitlements, options: CheckedOptions): Entitlements {
  const existing = entitlements[ASSOCIATED_DOMAINS];
  const listed = Array.isArray(existing) ? existing.filter((entry): entry is string => typeof entry === 'string') : [];
  const merged = [...new Set([...listed, ...options.linkDomains.map((domain) => `applinks:${domain}`)])];
  return { ...entitlements, [ASSOCIATED_DOMAINS]: merged };
}

export function withReportEndpoints(plist: InfoPlist, options: CheckedOptions): InfoPlist {
  return { ...plist, [SKAN_REPORT_ENDPOINT]: options.reportEndpoint, [ADATTRIBUTIONKIT_COPY_ENDPOINT]: options.reportEndpoint };
}

/** One verified filter per link domain (https, the domain, each path prefix), added unless an equal one is there. */
export function withAppLinks(filters: readonly IntentFilter[], options: CheckedOptions): IntentFilter[] {
  const merged = [...filters];
  const present = new Set(filters.map((filter) => JSON.stringify(filter)));
  for (const domain of options.linkDomains) {
    const filter: IntentFilter = {
      $: { 'android:autoVerify': 'true' },
      action: [{ $: { 'android:name': 'android.intent.action.VIEW' } }],
      category: [
        { $: { 'android:name': 'android.intent.category.DEFAULT' } },
        { $: { 'android:name': 'android.intent.category.BROWSABLE' } },
      ],
      data: options.linkPaths.map((path) => ({ $: { 'android:scheme': 'https', 'android:host': domain, 'android:pathPrefix': path } })),
    };
    if (!present.has(JSON.stringify(filter))) merged.push(filter);
  }
  return merged;
}

export default withAttribution;
