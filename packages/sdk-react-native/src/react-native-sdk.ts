import {
  AD_REVENUE_EVENT,
  type AdRevenueImpression,
  type ConsentDetails,
  type Diagnostics,
  type FirstLaunchAnswer,
  type InstallSignals,
  linkOf,
  type PurchaseRefund,
  type SchedulerPort,
  Sdk,
  type SdkConfig,
  type TrackOptions,
  trackRefund,
} from '@attribution/sdk-core';
import { asyncStoragePort, fetchNetwork, playInstallReferrer, realScheduler, secureUuid, within } from './adapters.js';
import { type DeepLink, deepLinkFieldsOf, MAX_LINK_URL_CHARS, Observed, presentFields } from './deep-link.js';
import type { AppStateModule, AsyncStorageModule, FetchLike, LinkingModule, PlayInstallReferrerModule, Subscription } from './modules.js';
import { adServicesTokenOf, advertisingIdOf, type ConversionValueUpdate, checkedConversionValue, type Providers } from './providers.js';

export const REACT_NATIVE_SDK_VERSION = 'attribution-sdk-react-native/0.1.0';

export interface ReactNativeConfig extends Omit<SdkConfig, 'onDeepLink'> {
  /** The app's version, sent with the first-launch call (e.g. from expo-application's nativeApplicationVersion). */
  readonly appVersion: string;
  /** A deferred deep link (once, at the first launch's answer) or a link that opened the app (each time). */
  readonly onDeepLink?: (link: DeepLink) => void;
  readonly providers?: Providers;
  /** How long the first launch waits for each provider and the install referrer. Default 3 s. */
  readonly providerTimeoutMs?: number;
}

/** React Native and the community modules the SDK runs on (index.ts passes the real ones). */
export interface ReactNativeModules {
  /** `Platform.OS`. */
  readonly os: 'ios' | 'android';
  readonly appState: AppStateModule;
  readonly linking: LinkingModule;
  readonly asyncStorage: AsyncStorageModule;
  /** `PlayInstallReferrer` from react-native-play-install-referrer, on Android. */
  readonly installReferrer?: PlayInstallReferrerModule;
  /** Default: the global `fetch`. */
  readonly fetch?: FetchLike;
  /** Default: `crypto.randomUUID`, or a v4 UUID from `crypto.getRandomValues`. */
  readonly randomUuid?: () => string;
  /** Default: `Date.now` and the global timers. */
  readonly scheduler?: SchedulerPort;
}

/**
 * The SDK in a React Native app: the core (`@attribution/sdk-core`) on AsyncStorage, with
 * sessions and the background flush from AppState, the links that open the app from Linking, the
 * Play install referrer and the app's providers at the first launch (docs/sdk.md, "React Native
 * and Expo").
 */
export class ReactNativeAttribution {
  private readonly subscriptions: Subscription[] = [];
  private foreground = true;
  private linkChain: Promise<unknown> = Promise.resolve();
  private stopped = false;

  private constructor(
    private readonly config: ReactNativeConfig,
    private readonly modules: ReactNativeModules,
    private readonly core: Sdk,
    private readonly known: Known,
  ) {}

  /** The first-launch answer, once the service has given one (this launch or an earlier one). */
  get attribution(): Observed<FirstLaunchAnswer> {
    return this.known.attribution;
  }

  /** The last deep link to open: deferred or direct. */
  get deepLink(): Observed<DeepLink> {
    return this.known.deepLink;
  }

  static async start(config: ReactNativeConfig, modules: ReactNativeModules): Promise<ReactNativeAttribution> {
    const scheduler = modules.scheduler ?? realScheduler;
    const timeoutMs = config.providerTimeoutMs ?? 3_000;
    let self: ReactNativeAttribution | undefined;
    // Links that arrive while the core starts are taken once it has started, so none is lost.
    const early: unknown[] = [];
    const urls = modules.linking.addEventListener('url', (event) => (self ? self.opened(event?.url) : early.push(event?.url)));
    let core: Sdk;
    let known: Known;
    try {
      known = {
        attribution: new Observed(),
        deepLink: new Observed(),
        advertisingId: await within(scheduler, timeoutMs, readTracking(config.providers), undefined),
      };
      core = await Sdk.start(
        {
          sdkVersion: REACT_NATIVE_SDK_VERSION,
          ...config,
          onAttribution: (answer) => {
            known.attribution.set(answer);
            config.onAttribution?.(answer);
          },
          onDeepLink: (fields) => announce(config, known, { source: 'deferred', fields: presentFields(fields) }),
        },
        {
          storage: asyncStoragePort(modules.asyncStorage),
          network: fetchNetwork(modules.fetch, scheduler),
          scheduler,
          platform: {
            platform: modules.os,
            kind: modules.os,
            appVersion: config.appVersion,
            randomUuid: modules.randomUuid ?? secureUuid,
            random: Math.random,
          },
          installSignals: () => installSignals(config, modules, scheduler, timeoutMs),
          advertisingId: () => known.advertisingId,
        },
      );
    } catch (error) {
      urls.remove(); // the app may call start again
      throw error;
    }
    self = new ReactNativeAttribution(config, modules, core, known);
    self.subscriptions.push(
      urls,
      modules.appState.addEventListener('change', (state) => self?.changed(state)),
    );
    if (modules.appState.currentState === 'background') self.changed('background');
    const initial = await modules.linking.getInitialURL().catch(() => undefined);
    for (const url of [initial, ...early]) self.opened(url);
    await self.linkChain;
    return self;
  }

  /** Tracks an event: on the device, with its event_id, when the promise resolves (docs/sdk.md). */
  track(name: string, options?: TrackOptions): Promise<string | undefined> {
    return this.core.track(name, options);
  }

  /** Tracks one ad impression's revenue, as the mediation SDK reports it (docs/sdk.md, "Ad revenue"). */
  trackAdRevenue(impression: AdRevenueImpression): Promise<string | undefined> {
    return this.core.track(AD_REVENUE_EVENT, { adRevenue: impression });
  }

  /** Tracks a purchase refunded, in part or whole: a `refund` event naming the purchase (docs/sdk.md, "Refunds"). */
  trackRefund(refund: PurchaseRefund): Promise<string | undefined> {
    return trackRefund(this.core, refund);
  }

  /**
   * With `requireConsent`: grants or refuses measurement. Granted, the advertising id is read
   * again. `details`: the user's consent as the CMP gives it, sent to the service (docs/sdk.md, "Consent").
   */
  async setConsent(granted: boolean, details?: ConsentDetails): Promise<void> {
    if (granted) await this.refreshTracking();
    await this.core.setConsent(granted, details);
  }

  /** Reads the ATT status and advertising id again (call it after the app's ATT prompt). */
  async refreshTracking(): Promise<void> {
    this.known.advertisingId = await within(
      this.modules.scheduler ?? realScheduler,
      this.config.providerTimeoutMs ?? 3_000,
      readTracking(this.config.providers),
      undefined,
    );
  }

  /**
   * Passes a SKAdNetwork / AdAttributionKit conversion value to the app's provider (iOS).
   * Resolves false when there is no provider or the platform is not iOS; throws a RangeError
   * (`bad_conversion_value: ...`) for a value Apple would not take.
   */
  async updateConversionValue(update: ConversionValueUpdate): Promise<boolean> {
    const checked = checkedConversionValue(update);
    const provider = this.config.providers?.updateConversionValue;
    if (this.modules.os !== 'ios' || !provider) return false;
    await provider(checked);
    return true;
  }

  optOut(): Promise<void> {
    return this.core.optOut();
  }

  forgetMe(): Promise<void> {
    return this.core.forgetMe();
  }

  flush(): Promise<void> {
    return this.core.flush();
  }

  diagnostics(): Diagnostics {
    return this.core.diagnostics();
  }

  /** Removes the listeners and stops the timers; what waits stays on the device. */
  stop(): void {
    this.stopped = true;
    for (const subscription of this.subscriptions.splice(0)) subscription.remove();
    this.core.stop();
  }

  /** AppState: `active` is the foreground; `background` sends what waits at once. `inactive` (iOS, in between) changes nothing. */
  private changed(state: string): void {
    if (this.stopped || (state !== 'active' && state !== 'background')) return;
    const foreground = state === 'active';
    if (foreground === this.foreground) return;
    this.foreground = foreground;
    if (foreground) void this.refreshTracking().then(() => this.core.onForeground());
    else void this.core.onBackground();
  }

  /** A URL opened the app: a `deep_link_open` when it is one of the service's links, and the app told of its deep link. */
  private opened(url: unknown): void {
    if (this.stopped || typeof url !== 'string' || url.length === 0 || url.length > MAX_LINK_URL_CHARS) return;
    this.linkChain = this.linkChain.then(async () => {
      const { linkId, clickId } = linkOf(url);
      const fields = deepLinkFieldsOf(url);
      // A failed write of the open must not keep the app from hearing of the link, nor stop the links after it.
      if (linkId || clickId) await this.core.openedByLink(url).catch(() => undefined);
      if (linkId || clickId || Object.keys(fields).length > 0) announce(this.config, this.known, { source: 'direct', url, fields });
    });
  }
}

/** What the SDK knows beside the core's state, shared with the core's callbacks from before the SDK object exists. */
interface Known {
  readonly attribution: Observed<FirstLaunchAnswer>;
  readonly deepLink: Observed<DeepLink>;
  /** The advertising id while the provider says tracking is authorized; the core sends it only with consent. */
  advertisingId: string | undefined;
}

function announce(config: ReactNativeConfig, known: Known, link: DeepLink): void {
  known.deepLink.set(link);
  config.onDeepLink?.(link);
}

async function readTracking(providers: Providers | undefined): Promise<string | undefined> {
  if (!providers?.tracking) return undefined;
  const status = await providers.tracking.status();
  return advertisingIdOf(status, status === 'authorized' ? await providers.tracking.advertisingId() : undefined);
}

/** At the first launch only: the Play referrer (Android) and the AdServices token (iOS), each within the timeout. */
async function installSignals(
  config: ReactNativeConfig,
  modules: ReactNativeModules,
  scheduler: SchedulerPort,
  timeoutMs: number,
): Promise<InstallSignals | undefined> {
  const referrer = modules.os === 'android' && modules.installReferrer ? playInstallReferrer(modules.installReferrer)() : undefined;
  const token = modules.os === 'ios' && config.providers?.adServicesToken ? config.providers.adServicesToken() : undefined;
  const [signals, adservices] = await Promise.all([
    referrer && within(scheduler, timeoutMs, referrer, undefined),
    token && within(scheduler, timeoutMs, token.then(adServicesTokenOf), undefined),
  ]);
  if (!signals && !adservices) return undefined;
  return { ...signals, ...(adservices && { adservices_token: adservices }) };
}
