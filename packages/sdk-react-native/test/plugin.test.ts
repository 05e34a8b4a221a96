import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AndroidConfig, type ExportedConfig, evalModsAsync, type ModPlatform, withBaseMod } from '@expo/config-plugins';
import plist from '@expo/plist';
import { checkedOptions } from '../src/plugin/options';
import { withAttribution } from '../src/plugin/with-attribution';

// The Expo config plugin through @expo/config-plugins' own mod machinery: evalModsAsync runs the
// mods as `expo prebuild` does, over sample native files that a provider mod hands in (the part
// prebuild reads from ios/ and android/), and the results are written the way prebuild writes
// them (@expo/plist for the plists, the manifest writer for AndroidManifest.xml).
const OPTIONS = { linkDomains: ['go.example.com', 'Links.Example.org'], reportEndpointDomain: 'api.example.com' };

const SAMPLE_MANIFEST = {
  manifest: {
    $: { 'xmlns:android': 'http://schemas.android.com/apk/res/android' },
    application: [
      {
        $: { 'android:name': '.MainApplication' },
        activity: [
          {
            $: { 'android:name': '.MainActivity', 'android:exported': 'true' },
            'intent-filter': [
              {
                action: [{ $: { 'android:name': 'android.intent.action.MAIN' } }],
                category: [{ $: { 'android:name': 'android.intent.category.LAUNCHER' } }],
              },
            ],
          },
        ],
      },
    ],
  },
} as AndroidConfig.Manifest.AndroidManifest;

const samples = () => ({
  infoPlist: { CFBundleName: 'Demo', NSAdvertisingAttributionReportEndpoint: 'https://old.example.net' },
  entitlements: { 'com.apple.developer.associated-domains': ['applinks:own.example.com', 'applinks:go.example.com'] },
  androidManifest: structuredClone(SAMPLE_MANIFEST),
});

/** Runs the config's mods as prebuild does, each over its sample file; returns the files as prebuild would write them. */
async function prebuild(config: ExportedConfig) {
  const given = samples();
  const results: Record<string, unknown> = {};
  for (const [platform, mod] of [
    ['ios', 'infoPlist'],
    ['ios', 'entitlements'],
    ['android', 'manifest'],
  ] as const) {
    const sample = mod === 'manifest' ? given.androidManifest : given[mod];
    config = withBaseMod(config, {
      platform: platform as ModPlatform,
      mod,
      isProvider: true,
      action: async (props) => {
        const { nextMod, ...modRequest } = props.modRequest;
        if (!nextMod) throw new Error(`no mod of the plugin for ${platform}.${mod}`);
        const done = await nextMod({ ...props, modResults: sample, modRequest });
        results[mod] = done.modResults;
        return done;
      },
    });
  }
  const projectRoot = mkdtempSync(join(tmpdir(), 'rn-plugin-'));
  try {
    await evalModsAsync(config, { projectRoot, platforms: ['ios', 'android'], assertMissingModProviders: true });
    const manifestPath = join(projectRoot, 'AndroidManifest.xml');
    await AndroidConfig.Manifest.writeAndroidManifestAsync(manifestPath, results.manifest as AndroidConfig.Manifest.AndroidManifest);
    return {
      infoPlist: plist.build(results.infoPlist as object),
      entitlements: plist.build(results.entitlements as object),
      manifest: readFileSync(manifestPath, 'utf8'),
      results,
    };
  } finally {
    rmSync(projectRoot, { recursive: true, force: true });
  }
}

const base = (): ExportedConfig => ({
  name: 'Demo',
  slug: 'demo',
  ios: { bundleIdentifier: 'com.example.demo' },
  android: { package: 'com.example.demo' },
});

describe('the Expo config plugin', () => {
  it('writes the associated domains, the postback copy endpoints and the verified App Links filters', async () => {
    const files = await prebuild(withAttribution(base(), OPTIONS));
    expect(files.entitlements).toContain('<key>com.apple.developer.associated-domains</key>');
    expect(files.results.entitlements).toEqual({
      'com.apple.developer.associated-domains': ['applinks:own.example.com', 'applinks:go.example.com', 'applinks:links.example.org'],
    });
    expect(files.infoPlist).toContain('<key>NSAdvertisingAttributionReportEndpoint</key>\n    <string>https://api.example.com</string>');
    expect(files.infoPlist).toContain('<key>AttributionCopyEndpoint</key>\n    <string>https://api.example.com</string>');
    expect(files.infoPlist).toContain('<string>Demo</string>');
    for (const host of ['go.example.com', 'links.example.org']) {
      expect(files.manifest).toContain(
        `<intent-filter android:autoVerify="true">
        <action android:name="android.intent.action.VIEW"/>
        <category android:name="android.intent.category.DEFAULT"/>
        <category android:name="android.intent.category.BROWSABLE"/>
        <data android:scheme="https" android:host="${host}" android:pathPrefix="/l/"/>
      </intent-filter>`,
      );
    }
    expect(files.manifest).toContain('android.intent.category.LAUNCHER');
  });

  it('takes link path prefixes, one data element each', async () => {
    const files = await prebuild(withAttribution(base(), { ...OPTIONS, linkDomains: ['go.example.com'], linkPaths: ['/l/', '/open/'] }));
    expect(files.manifest).toContain(
      '<data android:scheme="https" android:host="go.example.com" android:pathPrefix="/l/"/>\n        <data android:scheme="https" android:host="go.example.com" android:pathPrefix="/open/"/>',
    );
  });

  it('adds nothing twice when applied twice', async () => {
    const once = await prebuild(withAttribution(base(), OPTIONS));
    const twice = await prebuild(withAttribution(withAttribution(base(), OPTIONS), OPTIONS));
    expect(twice.infoPlist).toBe(once.infoPlist);
    expect(twice.entitlements).toBe(once.entitlements);
    expect(twice.manifest).toBe(once.manifest);
  });

  it.each([
    [{ ...OPTIONS, linkDomains: ['https://go.example.com'] }, /linkDomains\[0\] "https:\/\/go.example.com" is not a hostname/],
    [{ ...OPTIONS, linkDomains: ['go.example.com/l'] }, /linkDomains\[0\]/],
    [{ ...OPTIONS, linkDomains: ['*.example.com'] }, /linkDomains\[0\]/],
    [{ ...OPTIONS, linkDomains: ['localhost'] }, /linkDomains\[0\]/],
    [{ ...OPTIONS, linkDomains: [] }, /linkDomains must be a list of 1 to 20 hostnames/],
    [{ ...OPTIONS, linkDomains: Array.from({ length: 21 }, (_, i) => `d${i}.example.com`) }, /linkDomains must be/],
    [{ ...OPTIONS, linkDomains: 'go.example.com' }, /linkDomains must be/],
    [{ ...OPTIONS, reportEndpointDomain: 'https://api.example.com' }, /reportEndpointDomain "https:\/\/api.example.com" is not a hostname/],
    [{ ...OPTIONS, reportEndpointDomain: undefined }, /reportEndpointDomain undefined is not a hostname/],
    [{ ...OPTIONS, linkPaths: ['l/'] }, /linkPaths\[0\] "l\/" is not a path prefix/],
    [{ ...OPTIONS, linkPaths: ['/l/*'] }, /linkPaths\[0\]/],
    [{ ...OPTIONS, linkPaths: [] }, /linkPaths must be a list/],
    [undefined, /options are required/],
  ])('refuses options that are not what it takes, naming the option (%#)', (options, message) => {
    expect(() => withAttribution(base(), options as never)).toThrow(message);
    expect(() => checkedOptions(options)).toThrow(/^@attribution\/sdk-react-native config plugin: /);
  });

  it('is what app.plugin.js gives Expo', () => {
    // app.plugin.js loads the CommonJS build (npm run build:packages); the same function by name.
    expect((require('../app.plugin.js') as { name: string }).name).toBe('withAttribution');
  });
});
