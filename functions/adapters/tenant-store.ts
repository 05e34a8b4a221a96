import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isTimeZone, UTC } from '../domain/common/days';
import type { TenantLookup } from '../domain/ingest/event-auth';
import type { ServerKeys } from '../domain/reports/answer-report';
import { APP_STORE_ID, appStoreIdOfUrl, type SkanApp } from '../domain/skan/postback-match';
import { hashServerKey, newAppId, newAppKey, newCompanyId, newCompanyKey, newServerKey } from '../domain/tenants/keys';
import type { SigningKeys } from '../domain/tenants/signing-keys';
import {
  type App,
  type AppChanges,
  type AppDestinations,
  type AppWithSecret,
  appTimeZone,
  type Company,
  DEFAULT_LOOKBACK_DAYS,
  LINK_SETTINGS,
  monthlyCapFor,
  type Plan,
  type ServerKeyRecord,
  type ServerKeyScope,
} from '../domain/tenants/tenant';
import { dynamoClient } from '../shared/clients/dynamo';
import { TtlCache } from '../shared/ttl-cache';
import { isConditionFailure } from './aws-errors';
import { LinkDomainStore } from './link-domain-store';
import { scanItems } from './query-pages';
import type { SigningSecretStore } from './signing-secret-store';
import { WebOriginStore } from './web-origin-store';

export class NotFoundError extends Error {
  constructor(what: string) {
    super(`${what} not found`);
    this.name = 'NotFoundError';
  }
}

const companyPk = (companyKey: string) => `company#${companyKey}`;
const appPk = (appKey: string) => `app#${appKey}`;
const serverKeyPk = (keyHash: string) => `server_key#${keyHash}`;
/** Points an App Store id to its app, so a postback finds its app by the id it names (docs/ios.md section 2). */
const appStorePk = (appStoreId: string) => `app_store#${appStoreId}`;

/** Another app holds the App Store id (`admin app create|update --app-store-id`): the admin tools' 409, named by its code. */
export class AppStoreIdTakenError extends Error {
  constructor(appStoreId: string) {
    super(`app_store_id_taken: another app has App Store id ${appStoreId}`);
    this.name = 'AppStoreIdTakenError';
  }
}

/**
 * The attribute under which versions before the signing_secrets table kept an app's secret in its
 * tenants item. `admin signing-secrets migrate` (and npm start, on a local data directory) moves
 * it out; until then the functions that verify signatures find it there (TenantStore.signingSecret).
 */
const LEGACY_SECRET = 'signing_secret';

/**
 * Companies, apps and server keys in the tenants table. Each item's key is the credential the
 * hot path holds, so authenticating a request is one consistent GetItem; the by_id index serves
 * the look-ups by id that only the aggregator and the admin tools make.
 *
 * Apps' signing secrets are in the signing secret store, which only the operator and the
 * functions that verify signatures are given (and may read): creating an app and reading its
 * secret need it, every other look-up does without.
 */
export class TenantStore {
  constructor(
    private readonly tableName: string,
    private readonly secrets?: SigningSecretStore,
  ) {}

  async createCompany(input: { name: string; plan?: Plan; monthlyCap?: number }): Promise<Company> {
    const plan = input.plan ?? 'free';
    const company: Company = {
      company_id: newCompanyId(),
      company_key: newCompanyKey(),
      name: input.name,
      plan,
      monthly_cap: monthlyCapFor(plan, input.monthlyCap),
      suspended: false,
      created_ms: Date.now(),
    };
    await this.putNew(companyPk(company.company_key), company.company_id, 'company', company);
    return company;
  }

  async companyByKey(companyKey: string): Promise<Company | undefined> {
    return this.get<Company>(companyPk(companyKey));
  }

  /** Returns false when no company has that key. */
  async setCompanySuspended(companyKey: string, suspended: boolean): Promise<boolean> {
    return this.updateExisting(companyPk(companyKey), 'SET suspended = :v', { ':v': suspended });
  }

  /** The secret is stored before the app: an app never exists without one (a secret without its app is harmless). */
  async createApp(
    input: {
      companyKey: string;
      name: string;
      probabilistic?: boolean;
      lookbackDays?: number;
      timeZone?: string;
      /** Else the one in the iOS store URL, if any. */
      appStoreId?: string;
    } & AppDestinations,
  ): Promise<AppWithSecret> {
    const secrets = this.secretStore();
    const timeZone = input.timeZone ?? UTC;
    if (!isTimeZone(timeZone)) throw new Error(`${timeZone} is not an IANA time zone`);
    if (input.appStoreId !== undefined && !APP_STORE_ID.test(input.appStoreId))
      throw new Error(`${input.appStoreId} is not an App Store id`);
    const appStoreId = input.appStoreId ?? appStoreIdOfUrl(input.ios_url);
    const company = await this.companyByKey(input.companyKey);
    if (!company) throw new NotFoundError('company');
    const made: App = {
      app_id: newAppId(),
      app_key: newAppKey(),
      company_id: company.company_id,
      company_key: company.company_key,
      name: input.name,
      ios_url: input.ios_url,
      android_url: input.android_url,
      web_url: input.web_url,
      probabilistic: input.probabilistic ?? false,
      lookback_days: input.lookbackDays ?? DEFAULT_LOOKBACK_DAYS,
      time_zone: timeZone,
      created_ms: Date.now(),
    };
    // An id given is the app's or an error; one read from the iOS URL only when no other app has it
    // (two apps of one service may share a store URL: a test app beside the real one).
    const claimed = appStoreId !== undefined && (await this.claimAppStoreId(appStoreId, made, input.appStoreId === undefined));
    const app: App = claimed ? { ...made, app_store_id: appStoreId } : made;
    const signing_secret = await secrets.create(app.app_id);
    await this.putNew(appPk(app.app_key), app.app_id, 'app', app);
    return { ...app, signing_secret };
  }

  async appByKey(appKey: string): Promise<App | undefined> {
    return this.get<App>(appPk(appKey));
  }

  /**
   * Changes an app's name, store URLs, time zone, App Store id or link settings (`app update`); undefined when
   * no app has the key. A new time zone applies to data aggregated after it (docs/reports.md,
   * "Time zones"). Another app's App Store id is AppStoreIdTakenError.
   */
  async updateApp(appKey: string, requested: AppChanges): Promise<App | undefined> {
    if (requested.web_origins !== undefined) return this.updateWebOrigins(appKey, requested, requested.web_origins);
    if (!LINK_SETTINGS.some((field) => requested[field] !== undefined)) return this.updateAppFields(appKey, requested);
    // The link settings change what the link domains' well-known files say: the app is put on each
    // of its domains first (LinkDomainTakenError before anything is written when one is another
    // company's), its record next, and it leaves the domains it no longer names last, so a file never
    // stops naming an app that still names the domain.
    const before = await this.appByKey(appKey);
    if (!before) return undefined;
    const linked = {
      ...before,
      ...Object.fromEntries(LINK_SETTINGS.flatMap((f) => (requested[f] === undefined ? [] : [[f, requested[f]]]))),
    };
    const domains = new LinkDomainStore(this.tableName);
    for (const domain of linked.link_domains ?? []) await domains.serve(domain, linked);
    const after = await this.updateAppFields(appKey, requested);
    for (const domain of before.link_domains ?? []) {
      if (!linked.link_domains?.includes(domain)) await domains.withdraw(domain, before.app_id);
    }
    return after;
  }

  /**
   * A new list of web origins (docs/sdk.md, "CORS"): the app is put on each origin's index item
   * first, its record next, and it leaves the origins it no longer lists last, so a preflight is
   * never refused for an origin the app lists (the index may name an app a moment too long,
   * which only lets a preflight through that the answer then refuses).
   */
  private async updateWebOrigins(appKey: string, requested: AppChanges, origins: readonly string[]): Promise<App | undefined> {
    const before = await this.appByKey(appKey);
    if (!before) return undefined;
    const index = new WebOriginStore(this.tableName);
    for (const origin of origins) await index.allow(origin, before.app_id);
    const others = await this.updateApp(appKey, { ...requested, web_origins: undefined });
    const after = others && (await this.applyChanges(appKey, { web_origins: [...origins] }));
    for (const origin of before.web_origins ?? []) {
      if (!origins.includes(origin)) await index.withdraw(origin, before.app_id);
    }
    return after;
  }

  private async updateAppFields(appKey: string, requested: AppChanges): Promise<App | undefined> {
    if (requested.time_zone !== undefined && !isTimeZone(requested.time_zone))
      throw new Error(`${requested.time_zone} is not an IANA time zone`);
    const changes = { ...requested, app_store_id: requested.app_store_id ?? appStoreIdOfUrl(requested.ios_url) };
    if (changes.app_store_id !== undefined) {
      if (!APP_STORE_ID.test(changes.app_store_id)) throw new Error(`${changes.app_store_id} is not an App Store id`);
      const before = await this.appByKey(appKey);
      if (!before) return undefined;
      const fromUrl = requested.app_store_id === undefined;
      // An id read from a new iOS URL is taken only by an app without one, and only when free (as at app create).
      const kept = before.app_store_id === changes.app_store_id || (fromUrl && before.app_store_id !== undefined);
      // The new pointer first: an app never names an id that points elsewhere. The old one goes last.
      if (kept || !(await this.claimAppStoreId(changes.app_store_id, before, fromUrl))) {
        delete changes.app_store_id;
      } else {
        const after = await this.applyChanges(appKey, changes);
        if (before.app_store_id !== undefined) await this.dropAppStoreId(before.app_store_id, before);
        return after;
      }
    }
    return this.applyChanges(appKey, changes);
  }

  private async applyChanges(appKey: string, changes: AppChanges): Promise<App | undefined> {
    const fields = Object.entries(changes).filter(([, value]) => value !== undefined);
    if (fields.length === 0) return this.appByKey(appKey);
    try {
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: appPk(appKey) },
          UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: { '#kind': 'kind', ...Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])) },
          ExpressionAttributeValues: { ':app': 'app', ...Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])) },
          ConditionExpression: 'attribute_exists(pk) AND #kind = :app',
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? strip<App>(Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /**
   * Points the App Store id to the app, unless another app holds it (AppStoreIdTakenError, or
   * false when told to take it quietly). A pointer whose app does not name the id back (an app
   * create or update that died halfway) is anybody's.
   */
  private async claimAppStoreId(appStoreId: string, app: Pick<App, 'app_id' | 'app_key'>, quietly = false): Promise<boolean> {
    const put = (condition: string, values: Record<string, unknown>) =>
      dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: appStorePk(appStoreId), kind: 'app_store', app_store_id: appStoreId, app_id: app.app_id, app_key: app.app_key },
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      );
    try {
      await put('attribute_not_exists(pk) OR app_key = :mine', { ':mine': app.app_key });
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const pointer = await this.get<{ app_key: string }>(appStorePk(appStoreId));
    const holder = pointer && (await this.appByKey(pointer.app_key));
    const taken = () => {
      if (quietly) return false;
      throw new AppStoreIdTakenError(appStoreId);
    };
    if (holder?.app_store_id === appStoreId) return taken();
    try {
      await put('attribute_not_exists(pk) OR app_key = :stale', { ':stale': pointer?.app_key ?? '' });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return taken();
      throw error;
    }
  }

  /** Removes the app's old pointer, if it is still the app's. */
  private async dropAppStoreId(appStoreId: string, app: Pick<App, 'app_key'>): Promise<void> {
    try {
      await dynamoClient().send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { pk: appStorePk(appStoreId) },
          ConditionExpression: 'app_key = :mine',
          ExpressionAttributeValues: { ':mine': app.app_key },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** The app whose App Store id this is (one read of its pointer, one of the app), if any. */
  async appByAppStoreId(appStoreId: string): Promise<App | undefined> {
    const pointer = await this.get<{ app_key: string }>(appStorePk(appStoreId));
    if (!pointer) return undefined;
    const app = await this.appByKey(pointer.app_key);
    return app?.app_store_id === appStoreId ? app : undefined;
  }

  /**
   * Maps an ad network id to a partner name for the app's SKAN report (`admin skan network set`);
   * undefined when no app has the key. One attribute of the map is set, so two operators mapping
   * two networks at once both keep theirs.
   */
  async setSkanNetwork(appKey: string, adNetworkId: string, partner: string): Promise<App | undefined> {
    const names = { '#kind': 'kind', '#networks': 'skan_networks' };
    const update = async (expression: string, condition: string, values: Record<string, unknown>, extra: Record<string, string> = {}) => {
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: appPk(appKey) },
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: { ...names, ...extra },
          ExpressionAttributeValues: { ':app': 'app', ...values },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? strip<App>(Attributes) : undefined;
    };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        return await update(
          'SET #networks.#id = :partner',
          'attribute_exists(pk) AND #kind = :app AND attribute_exists(#networks)',
          { ':partner': partner },
          { '#id': adNetworkId },
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      try {
        return await update('SET #networks = :map', 'attribute_exists(pk) AND #kind = :app AND attribute_not_exists(#networks)', {
          ':map': { [adNetworkId]: partner },
        });
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      if (!(await this.appByKey(appKey))) return undefined;
    }
    throw new Error('the app changed while its ad network was being set; try again');
  }

  /** The app with its signing secret (`app show`): the operator's view. */
  async appWithSecret(appKey: string): Promise<AppWithSecret | undefined> {
    const app = await this.appByKey(appKey);
    if (!app) return undefined;
    const signing_secret = await this.signingSecret(app);
    if (signing_secret === undefined) throw new Error(`app ${app.app_id} has no signing secret`);
    return { ...app, signing_secret };
  }

  /**
   * The app's signing secret: from the signing secret store, else (an app made before it, not yet
   * moved) from the app's tenants item. Functions that verify signatures may read both.
   */
  async signingSecret(app: Pick<App, 'app_id' | 'app_key'>): Promise<string | undefined> {
    return (await this.signingKeys(app))?.current;
  }

  /** The app's current signing secret and the retired ones in their grace (signing-keys.ts): what a signature is checked against. */
  async signingKeys(app: Pick<App, 'app_id' | 'app_key'>): Promise<SigningKeys | undefined> {
    const keys = await this.secretStore().keys(app.app_id);
    if (keys !== undefined) return keys;
    const { Item } = await dynamoClient().send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: appPk(app.app_key) },
        ProjectionExpression: '#secret',
        ExpressionAttributeNames: { '#secret': LEGACY_SECRET },
        ConsistentRead: true,
      }),
    );
    const legacy: unknown = Item?.[LEGACY_SECRET];
    return typeof legacy === 'string' ? { current: legacy, previous: [] } : undefined;
  }

  /**
   * Moves every app's signing secret that versions before the signing_secrets table kept in its
   * tenants item into the store, then removes it from the item (only if it is still the value
   * moved). Safe to run again and to cut short: a secret already moved is kept. Returns how many
   * items no longer hold a secret.
   */
  async migrateSigningSecrets(): Promise<number> {
    const secrets = this.secretStore();
    let moved = 0;
    for await (const item of this.scanPages(
      '#kind = :app AND attribute_exists(#secret)',
      { '#kind': 'kind', '#secret': LEGACY_SECRET },
      { ':app': 'app' },
    )) {
      const secret = item[LEGACY_SECRET] as string;
      await secrets.putIfAbsent(item.app_id as string, secret);
      try {
        await dynamoClient().send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: item.pk },
            UpdateExpression: 'REMOVE #secret',
            ConditionExpression: '#secret = :secret',
            ExpressionAttributeNames: { '#secret': LEGACY_SECRET },
            ExpressionAttributeValues: { ':secret': secret },
          }),
        );
        moved += 1;
      } catch (error) {
        // Another run removed it first.
        if (!isConditionFailure(error)) throw error;
      }
    }
    return moved;
  }

  async appById(appId: string): Promise<App | undefined> {
    return this.byId<App>(appId, 'app');
  }

  /**
   * Creates a server key for an app, with its scopes (`read` unless told: what every key could do
   * before scopes); the plain key is returned once and never stored.
   */
  async createServerKey(
    appKey: string,
    scopes: readonly ServerKeyScope[] = ['read'],
    name?: string,
  ): Promise<{ serverKey: string; record: ServerKeyRecord }> {
    const app = await this.appByKey(appKey);
    if (!app) throw new NotFoundError('app');
    const serverKey = newServerKey();
    const record: ServerKeyRecord = {
      key_hash: hashServerKey(serverKey),
      app_id: app.app_id,
      company_id: app.company_id,
      revoked: false,
      created_ms: Date.now(),
      scopes: [...scopes],
      ...(name === undefined ? {} : { name }),
    };
    await this.putNew(serverKeyPk(record.key_hash), undefined, 'server_key', record);
    return { serverKey, record };
  }

  async serverKey(serverKey: string): Promise<ServerKeyRecord | undefined> {
    return this.serverKeyByHash(hashServerKey(serverKey));
  }

  /** A key by its id (`server-key list`'s key_id, the hash): the console API finds the company of `server-key revoke --key-id`. */
  async serverKeyByHash(keyHash: string): Promise<ServerKeyRecord | undefined> {
    return this.get<ServerKeyRecord>(serverKeyPk(keyHash));
  }

  /**
   * Sets a key's last use to nowMs unless its item already holds one within the interval (the
   * hourly rule of functions/domain/tenants/key-use.ts, kept by the table whatever the number of
   * callers). One write unit, also when the condition refuses it. False when refused, or when no
   * key has that hash (a use never makes an item).
   */
  async recordServerKeyUse(keyHash: string, nowMs: number, intervalMs: number): Promise<boolean> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: serverKeyPk(keyHash) },
          UpdateExpression: 'SET last_used_ms = :now',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(last_used_ms) OR last_used_ms < :cutoff)',
          ExpressionAttributeValues: { ':now': nowMs, ':cutoff': nowMs - intervalMs },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Returns false when the key is unknown. */
  async revokeServerKey(serverKey: string): Promise<boolean> {
    return this.updateExisting(serverKeyPk(hashServerKey(serverKey)), 'SET revoked = :v', { ':v': true });
  }

  /**
   * The admin tools' revocation from a list: only the hash is stored, so a key chosen from
   * serverKeysOfApp is named by it. Returns false when no key has that hash.
   */
  async revokeServerKeyByHash(keyHash: string): Promise<boolean> {
    return this.updateExisting(serverKeyPk(keyHash), 'SET revoked = :v', { ':v': true });
  }

  // The listings below serve the admin CLI and console only. The table is keyed for the hot
  // path's look-ups by credential, so they scan it: a tenants table holds a few items per
  // customer, and an operator's listing is rare.

  async listCompanies(): Promise<Company[]> {
    return this.scanKind<Company>('company');
  }

  /** Every app of every company, oldest first (the warehouse export's run over every app). */
  async listApps(): Promise<App[]> {
    return this.scanKind<App>('app');
  }

  async appsOfCompany(companyId: string): Promise<App[]> {
    return this.scanKind<App>('app', { company_id: companyId });
  }

  async serverKeysOfApp(appId: string): Promise<ServerKeyRecord[]> {
    return this.scanKind<ServerKeyRecord>('server_key', { app_id: appId });
  }

  private secretStore(): SigningSecretStore {
    if (!this.secrets) throw new Error('this tenant store was made without the signing secret store');
    return this.secrets;
  }

  private async putNew(pk: string, id: string | undefined, kind: string, record: object): Promise<void> {
    await dynamoClient().send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...record, pk, id, kind },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  private async get<T>(pk: string): Promise<T | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { pk }, ConsistentRead: true }));
    return Item ? strip<T>(Item) : undefined;
  }

  private async byId<T>(id: string, kind: string): Promise<T | undefined> {
    const { Items } = await dynamoClient().send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'by_id',
        KeyConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': id },
      }),
    );
    const item = Items?.find((i) => i.kind === kind);
    return item ? strip<T>(item) : undefined;
  }

  /** Every item of the table that passes a filter, page by page, read consistently. */
  private scanPages(
    filter: string,
    names: Record<string, string>,
    values: Record<string, unknown>,
  ): AsyncGenerator<Record<string, unknown>> {
    return scanItems({
      TableName: this.tableName,
      ConsistentRead: true,
      FilterExpression: filter,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  /** Every item of a kind (and, optionally, with one attribute equal to a value), oldest first. */
  private async scanKind<T extends { created_ms: number }>(kind: string, where?: Record<string, string>): Promise<T[]> {
    const [attribute, value] = Object.entries(where ?? {})[0] ?? [];
    const items: T[] = [];
    for await (const item of this.scanPages(
      attribute ? '#kind = :kind AND #a = :v' : '#kind = :kind',
      attribute ? { '#kind': 'kind', '#a': attribute } : { '#kind': 'kind' },
      attribute ? { ':kind': kind, ':v': value } : { ':kind': kind },
    )) {
      items.push(strip<T>(item));
    }
    return items.sort((a, b) => a.created_ms - b.created_ms);
  }

  private async updateExisting(pk: string, expression: string, values: Record<string, unknown>): Promise<boolean> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk },
          UpdateExpression: expression,
          ExpressionAttributeValues: values,
          ConditionExpression: 'attribute_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/** A record as stored, less the table's own attributes and a secret not yet moved, which no record carries. */
function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, id: _id, kind: _kind, [LEGACY_SECRET]: _secret, ...record } = item;
  return record as T;
}

/**
 * The hot path's view of the tenants: the same look-ups, cached. docs/architecture.md section 4 allows key
 * changes (revocation, suspension) to take up to 60 s; unknown keys are cached for less so a
 * freshly created key works almost at once while a flood of made-up keys still costs few reads.
 */
export class CachedTenants implements TenantLookup<App, Company>, ServerKeys {
  private readonly cache: TtlCache<unknown>;

  constructor(
    private readonly store: TenantStore,
    private readonly ttlMs = Number(process.env.KEY_CACHE_TTL_MS ?? 30_000),
    private readonly missTtlMs = Math.min(ttlMs, 2_000),
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  companyByKey(key: string): Promise<Company | undefined> {
    return this.cached(`c:${key}`, () => this.store.companyByKey(key));
  }

  appByKey(key: string): Promise<App | undefined> {
    return this.cached(`a:${key}`, () => this.store.appByKey(key));
  }

  appById(id: string): Promise<App | undefined> {
    return this.cached(`i:${id}`, () => this.store.appById(id));
  }

  serverKey(key: string): Promise<ServerKeyRecord | undefined> {
    return this.cached(`s:${hashServerKey(key)}`, () => this.store.serverKey(key));
  }

  signingKeys(app: Pick<App, 'app_id' | 'app_key'>): Promise<SigningKeys | undefined> {
    return this.cached(`k:${app.app_id}`, () => this.store.signingKeys(app));
  }

  /** The app an App Store id names, for Apple's postbacks (docs/ios.md section 2), cached as the keys are. */
  async skanAppOf(appStoreId: string): Promise<SkanApp | undefined> {
    const app = await this.cached<App>(`p:${appStoreId}`, () => this.store.appByAppStoreId(appStoreId));
    return app && { app_id: app.app_id, time_zone: appTimeZone(app), ...(app.skan_networks ? { skan_networks: app.skan_networks } : {}) };
  }

  /** The app's report time zone (UTC for an app unknown or without one), from the same cached look-up as appById. */
  async appTimeZone(appId: string): Promise<string> {
    const app = await this.appById(appId);
    return app ? appTimeZone(app) : UTC;
  }

  private async cached<T>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const value = await this.cache.getOrLoad(key, load, (v) => (v === undefined ? this.missTtlMs : this.ttlMs));
    return value as T | undefined;
  }
}
