import { z } from 'zod';
import { MAX_REPORT_KEY_SECRET_PREFIX } from '../../lib/function-constants';
import { SigningSecretStore } from '../adapters/signing-secret-store';
import { NotFoundError, TenantStore } from '../adapters/tenant-store';
import { DEFAULT_REENGAGEMENT_WINDOW_DAYS, MAX_REENGAGEMENT_WINDOW_DAYS } from '../domain/aggregation/reengagement';
import { changedMaxPull, MAX_APPLICATION, MAX_PLATFORMS, MAX_REPORT_KEY_SECRET } from '../domain/ingest/max-pull';
import { ANDROID_PACKAGE, APP_LINK_LIMITS, CERT_SHA256, IOS_APP_ID, LINK_DOMAIN } from '../domain/links/app-links';
import { PROBABILISTIC_BASES, probabilisticBasisOf } from '../domain/privacy/probabilistic-basis';
import { APP_STORE_ID } from '../domain/skan/postback-match';
import { MAX_GRACE_DAYS } from '../domain/tenants/signing-keys';
import { type App, appTimeZone, parseScopes, SERVER_KEY_NAME_MAX, SERVER_KEY_SCOPES, scopesOf } from '../domain/tenants/tenant';
import { WEB_ORIGIN_LIMITS, webOriginOf } from '../domain/tenants/web-origins';
import { resourceName } from '../shared/config';
import { defineCommand, UsageError } from './command';
import { intFlag, key, name, timeZone, url } from './flags';

/** Digits, 1 to 20: the id in the app's App Store URL (`.../id1234567890`). */
const appStoreId = z.string().regex(APP_STORE_ID, 'must be an App Store id: 1 to 20 digits');

/**
 * A comma list (the flag may also be given more than once: bin/admin.ts joins the values), each
 * item trimmed and normalized, then checked; empty clears the list.
 */
const commaList = (item: z.ZodString, max: number, normalize: (value: string) => string) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((value) => normalize(value.trim()))
        .filter(Boolean),
    )
    .pipe(z.array(item).max(max))
    .transform((values) => [...new Set(values)]);

/** The link settings of `app update` (docs/deep-links.md), each refused with its flag's name when not in its documented format. */
const appLinkFlags = {
  'ios-app-id': z
    .string()
    .trim()
    .max(APP_LINK_LIMITS.idLength)
    .regex(IOS_APP_ID, 'must be TEAMID.bundle.id: a 10-character team id (A-Z, 0-9), a period, then the bundle id')
    .optional(),
  'android-package': z
    .string()
    .trim()
    .max(APP_LINK_LIMITS.packageLength)
    .regex(ANDROID_PACKAGE, 'must be an Android package name, such as com.example.app')
    .optional(),
  'android-cert-sha256': commaList(
    z
      .string()
      .regex(CERT_SHA256, 'must be SHA-256 fingerprints: 32 hex byte pairs separated by colons (keytool -list -v), comma separated'),
    APP_LINK_LIMITS.certificates,
    (value) => value.toUpperCase(),
  ).optional(),
  'link-domain': commaList(
    z.string().regex(LINK_DOMAIN, 'must be DNS names such as go.example.com, comma separated'),
    APP_LINK_LIMITS.domains,
    (value) => value.toLowerCase().replace(/\.$/, ''),
  ).optional(),
};

/** Origins whose pages may call the SDK routes (docs/sdk.md, "CORS"): stored as browsers send them, lower case, no default port. */
const webOrigins = commaList(
  z
    .string()
    .refine(
      (value) => webOriginOf(value) === value,
      '--web-origin must be origins such as https://shop.example.com or https://example.com:8443 (https, or http for localhost; no path), comma separated',
    ),
  WEB_ORIGIN_LIMITS.perApp,
  (value) => webOriginOf(value) ?? value,
);

/** An app as the operator reads it: the settings that have a default shown with it (an app made before them has none stored). */
const appSettings = <A extends App>(app: A): A => ({ ...app, time_zone: appTimeZone(app), probabilistic_basis: probabilisticBasisOf(app) });

/** The operator's tenant store: with the signing secrets, which `app create` writes and `app show` prints. */
const tenants = () => new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets')));

export const tenantCommands = [
  defineCommand({
    name: 'company create',
    usage: 'company create --name N [--plan free|paid] [--monthly-cap N]',
    flags: z.object({ name, plan: z.enum(['free', 'paid']).optional(), 'monthly-cap': intFlag.optional() }),
    async execute(f) {
      const company = await tenants().createCompany({ name: f.name, plan: f.plan, monthlyCap: f['monthly-cap'] });
      return { company_id: company.company_id, company_key: company.company_key };
    },
  }),
  defineCommand({
    name: 'company list',
    usage: 'company list',
    flags: z.object({}),
    async execute() {
      return { companies: await tenants().listCompanies() };
    },
  }),
  defineCommand({
    name: 'company suspend',
    usage: "company suspend --company-key K        (its apps' events are refused with 401 company_suspended)",
    flags: z.object({ 'company-key': key }),
    async execute(f) {
      if (!(await tenants().setCompanySuspended(f['company-key'], true))) throw new NotFoundError('company');
      return { ok: true };
    },
  }),
  defineCommand({
    name: 'company resume',
    usage: 'company resume --company-key K',
    flags: z.object({ 'company-key': key }),
    async execute(f) {
      if (!(await tenants().setCompanySuspended(f['company-key'], false))) throw new NotFoundError('company');
      return { ok: true };
    },
  }),
  defineCommand({
    name: 'app create',
    usage:
      'app create --company-key K --name N [--ios-url U] [--android-url U] [--web-url U] [--probabilistic]\n' +
      '           [--time-zone Z]              (Z: the IANA zone whose days the reports count in, e.g. Europe/Berlin; default UTC)\n' +
      "           [--app-store-id N]           (Apple's postbacks name the app by it; default: the id in --ios-url, if any)",
    flags: z.object({
      'company-key': key,
      name,
      'ios-url': url.optional(),
      'android-url': url.optional(),
      'web-url': url.optional(),
      probabilistic: z.boolean().optional(),
      'time-zone': timeZone.optional(),
      'app-store-id': appStoreId.optional(),
    }),
    booleanFlags: ['probabilistic'],
    async execute(f) {
      const app = await tenants().createApp({
        companyKey: f['company-key'],
        name: f.name,
        ios_url: f['ios-url'],
        android_url: f['android-url'],
        web_url: f['web-url'],
        probabilistic: f.probabilistic,
        timeZone: f['time-zone'],
        appStoreId: f['app-store-id'],
      });
      return {
        app_id: app.app_id,
        app_key: app.app_key,
        signing_secret: app.signing_secret,
        time_zone: appTimeZone(app),
        ...(app.app_store_id === undefined ? {} : { app_store_id: app.app_store_id }),
      };
    },
  }),
  defineCommand({
    name: 'app update',
    usage:
      'app update --app-key K [--name N] [--ios-url U] [--android-url U] [--web-url U] [--time-zone Z] [--app-store-id N]\n' +
      '           [--ios-app-id TEAMID.bundle.id] [--android-package P] [--android-cert-sha256 AA:BB:..,..] [--link-domain D,..]\n' +
      '           [--web-origin https://shop.example.com,..]   (pages that may call the SDK routes, docs/sdk.md; at most 20)\n' +
      '           [--probabilistic on|off]   (matching by address and platform: first launches within 30 s, installs counted within 5 min)\n' +
      '           [--probabilistic-basis consent|legitimate_interest|off]   (its documented basis, default legitimate_interest: consent\n' +
      '                                             matches only installs whose consent allows it; off never matches, docs/privacy.md)\n' +
      `           [--reengagement-window-days N]   (0 to ${MAX_REENGAGEMENT_WINDOW_DAYS}, default ${DEFAULT_REENGAGEMENT_WINDOW_DAYS}: days a re-engaged install's revenue\n` +
      "                                             counts for the link's partner in the performance report; 0 turns that off, docs/deep-links.md)\n" +
      `           [--max-pull on|off] [--max-report-key-secret ${MAX_REPORT_KEY_SECRET_PREFIX}NAME] [--max-application ID] [--max-platform android|fireos|ios]\n` +
      "                                         (AppLovin MAX's daily ad revenue pull: the secret holding the report key, the package name or bundle id;\n" +
      '                                          on, the pull is the source of truth for applovin_max impressions, docs/ad-revenue.md)\n' +
      '                                         (a new time zone applies to data aggregated after it; `rebuild --apply` restates the past;\n' +
      "                                          the link settings are what the link domains' well-known files name, docs/deep-links.md)",
    flags: z.object({
      'app-key': key,
      name: name.optional(),
      'ios-url': url.optional(),
      'android-url': url.optional(),
      'web-url': url.optional(),
      'time-zone': timeZone.optional(),
      'app-store-id': appStoreId.optional(),
      ...appLinkFlags,
      'web-origin': webOrigins.optional(),
      probabilistic: z.enum(['on', 'off']).optional(),
      'probabilistic-basis': z.enum(PROBABILISTIC_BASES).optional(),
      'reengagement-window-days': z.coerce
        .number()
        .int('must be a whole number of days')
        .min(0)
        .max(MAX_REENGAGEMENT_WINDOW_DAYS)
        .optional(),
      'max-pull': z.enum(['on', 'off']).optional(),
      'max-report-key-secret': z
        .string()
        .regex(MAX_REPORT_KEY_SECRET, `must be a Secrets Manager name starting ${MAX_REPORT_KEY_SECRET_PREFIX}`)
        .optional(),
      'max-application': z.string().regex(MAX_APPLICATION, 'must be a package name or bundle id').optional(),
      'max-platform': z.enum(MAX_PLATFORMS).optional(),
    }),
    listFlags: ['android-cert-sha256', 'link-domain', 'web-origin'],
    async execute(f) {
      const maxChange = {
        on: f['max-pull'] === undefined ? undefined : f['max-pull'] === 'on',
        report_key_secret: f['max-report-key-secret'],
        application: f['max-application'],
        platform: f['max-platform'],
      };
      const before = Object.values(maxChange).some((v) => v !== undefined) ? await tenants().appByKey(f['app-key']) : undefined;
      const maxPull = changedMaxPull(before?.max_pull, maxChange);
      if (maxPull && 'missing' in maxPull)
        throw new UsageError(`--${maxPull.missing} is needed for the MAX pull`, 'app update', maxPull.missing);
      const app = await tenants().updateApp(f['app-key'], {
        max_pull: maxPull,
        ios_app_id: f['ios-app-id'],
        android_package: f['android-package'],
        android_cert_sha256: f['android-cert-sha256'],
        link_domains: f['link-domain'],
        web_origins: f['web-origin'],
        app_store_id: f['app-store-id'],
        name: f.name,
        ios_url: f['ios-url'],
        android_url: f['android-url'],
        web_url: f['web-url'],
        time_zone: f['time-zone'],
        probabilistic: f.probabilistic === undefined ? undefined : f.probabilistic === 'on',
        probabilistic_basis: f['probabilistic-basis'],
        reengagement_window_days: f['reengagement-window-days'],
      });
      if (!app) throw new NotFoundError('app');
      return appSettings(app);
    },
  }),
  defineCommand({
    name: 'app list',
    usage: "app list --company-key K                (the company's apps, without their signing secrets)",
    flags: z.object({ 'company-key': key }),
    async execute(f) {
      const store = tenants();
      const company = await store.companyByKey(f['company-key']);
      if (!company) throw new NotFoundError('company');
      // Apps carry no signing secret: only `app show` reads it.
      return { company_id: company.company_id, apps: (await store.appsOfCompany(company.company_id)).map(appSettings) };
    },
  }),
  defineCommand({
    name: 'app show',
    usage: 'app show --app-key K                    (the app: its keys, signing secret, store URLs, time zone, App Store id)',
    flags: z.object({ 'app-key': key }),
    async execute(f) {
      const app = await tenants().appWithSecret(f['app-key']);
      if (!app) throw new NotFoundError('app');
      return appSettings(app);
    },
  }),
  defineCommand({
    name: 'app rotate-signing-secret',
    usage: `app rotate-signing-secret --app-key K --grace-days N   (a new signing secret for new builds; the old one keeps verifying for N days, 0 to ${MAX_GRACE_DAYS}, so builds already shipped keep working)`,
    flags: z.object({ 'app-key': key, 'grace-days': z.coerce.number().int('must be a whole number of days').min(0).max(MAX_GRACE_DAYS) }),
    async execute(f) {
      const store = tenants();
      const app = await store.appByKey(f['app-key']);
      if (!app) throw new NotFoundError('app');
      const keys = await new SigningSecretStore(resourceName.table('signing_secrets')).rotate(app.app_id, f['grace-days'] * 86_400_000);
      if (!keys) {
        throw new Error(
          `app ${app.app_id} keeps its signing secret in the tenants table still: run signing-secrets migrate first (docs/secrets.md)`,
        );
      }
      return {
        app_id: app.app_id,
        signing_secret: keys.current,
        retired: keys.previous.map((retired) => ({ verifies_until: new Date(retired.until_ms).toISOString() })),
      };
    },
  }),
  defineCommand({
    name: 'server-key create',
    usage:
      'server-key create --app-key K [--scope read|cost|ad_revenue, or a comma list] [--name "BI export"]   (default read: the reports and the stream; cost: POST /api/v1/cost; ad_revenue: POST /api/v1/ad-revenue; the name, 1 to 100 characters, says what it is for. The key is printed once: only its SHA-256 is stored)',
    flags: z.object({
      'app-key': key,
      scope: z
        .string()
        .optional()
        .transform((text, context) => {
          const scopes = parseScopes(text ?? 'read');
          if (!scopes) context.addIssue({ code: 'custom', message: `--scope must be a comma list of ${SERVER_KEY_SCOPES.join(', ')}` });
          return scopes ?? [];
        }),
      name: z
        .string()
        .trim()
        .min(1)
        .max(SERVER_KEY_NAME_MAX)
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
        .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
        .optional(),
    }),
    async execute(f) {
      const { serverKey, record } = await tenants().createServerKey(f['app-key'], f.scope, f.name);
      return { server_key: serverKey, scopes: record.scopes, name: record.name ?? null };
    },
  }),
  defineCommand({
    name: 'server-key list',
    usage:
      'server-key list --app-key K              (key ids (SHA-256 of the key), names, scopes, created, last used (to the hour; null: never), revoked; never a key)',
    flags: z.object({ 'app-key': key }),
    async execute(f) {
      const store = tenants();
      const app = await store.appByKey(f['app-key']);
      if (!app) throw new NotFoundError('app');
      const keys = await store.serverKeysOfApp(app.app_id);
      return {
        app_id: app.app_id,
        server_keys: keys.map((k) => ({
          key_id: k.key_hash,
          name: k.name ?? null,
          created_ms: k.created_ms,
          revoked: k.revoked,
          scopes: scopesOf(k),
          last_used_ms: k.last_used_ms ?? null,
        })),
      };
    },
  }),
  defineCommand({
    name: 'server-key revoke',
    usage: 'server-key revoke --server-key S | --key-id H   (takes effect within 60 s)',
    flags: z
      .object({
        'server-key': key.optional(),
        'key-id': z
          .string()
          .regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters')
          .optional(),
      })
      .refine((f) => (f['server-key'] === undefined) !== (f['key-id'] === undefined), {
        message: 'give exactly one of --server-key and --key-id',
        path: ['server-key'],
      }),
    async execute(f) {
      const store = tenants();
      // The schema lets exactly one of the two through.
      const [keyId, serverKey] = [f['key-id'], f['server-key']];
      const found =
        keyId !== undefined
          ? await store.revokeServerKeyByHash(keyId)
          : serverKey !== undefined && (await store.revokeServerKey(serverKey));
      if (!found) throw new NotFoundError('server key');
      return { ok: true };
    },
  }),
  defineCommand({
    name: 'signing-secrets migrate',
    usage:
      'signing-secrets migrate                  (moves signing secrets out of the tenants table, where stacks deployed before the signing_secrets table kept them; run once after the upgrade)',
    flags: z.object({}),
    async execute() {
      return { moved: await tenants().migrateSigningSecrets() };
    },
  }),
];
