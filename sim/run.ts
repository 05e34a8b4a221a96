import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdmin } from '../bin/admin';
import { type AppCredentials, buildBatch, type EventBatchResult, EventClient, eventBatchRequest } from '../client/event-client';
import { pool } from '../functions/domain/common/pool';
import { ADATTRIBUTIONKIT_TEST_KID, adAttributionKitTestPrivateKey, skadnetworkTestPrivateKey } from '../local/skan-test-key';
import { APPLE_ADS_CPI_USD, APPLE_ADS_PARTNER, type AppleAdsAnswer, planAppleAds, tokenOf, withAppleAds } from './apple-ads';
import {
  compareReports,
  countedEvents,
  type Difference,
  expectedReports,
  fetchReport,
  fetchReports,
  type ReportRow,
  type Reports,
  type ReportWindow,
} from './check';
import { planRates, RATE_LOOKBACK_DAYS, type RateTable, toMicroUsd } from './currencies';
import { type ExpectedAttribution, expectedAttribution, type SentClick } from './expectations';
import { checkSdkSchema, sendPostbacks, setUpSkan } from './ios';
import { addDays, clearOfMidnights, daysFrom, localDay, utcDay } from './local-days';
import { identityOf, type OracleEvent, oracleRows, type PerfCells } from './oracle';
import {
  addClicks,
  addCost,
  type CostUpload,
  comparePerformance,
  expectedPerformance,
  fetchPerformance,
  lastAccepted,
  PERF_QUERIES,
  type PerfClick,
  planCost,
  queryLabel,
} from './performance';
import { Random } from './random';
import {
  compareSkan,
  expectedSkan,
  fetchSkanReport,
  planSkan,
  type SchemaFile,
  type SentPostback,
  type SigningKey,
  type SkanPlan,
} from './skan';
import {
  type Addressing,
  type AdImpression,
  type AppPlan,
  type ClickPlan,
  type ClickPurpose,
  DAY,
  HOUR,
  INSTALL_KINDS,
  type InstallKind,
  type Moment,
  PARTNERS,
  type PersonPlan,
  type PlannedEvent,
  planTraffic,
  type TrafficPlan,
  timeZoneOf,
} from './traffic';

/**
 * Runs a traffic plan against the service, through its public endpoints only: tenants, apps,
 * server keys and links through the admin CLI's code (local runtime or --stack), clicks through
 * GET /l/{id}, events through POST /event with the typed client, and, with --check, the four
 * reports through the Reporting API, compared with the oracle's rows for what was sent.
 */

export interface SimulateOptions {
  seed: string;
  apps: number;
  days: number;
  installs: number;
  check: boolean;
  stack?: string;
  /** The service's public URL, when it is not the one the admin CLI reports (a custom domain). */
  baseUrl?: string;
  concurrency?: number;
  /** How long aggregation may make no progress before the run gives up waiting for it. */
  stallTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface ClickTally {
  sent: number;
  recorded: number;
  /** Redirected without a click id, by why the simulator sent them. */
  dropped: Partial<Record<ClickPurpose, number>>;
  rate_limited: number;
  honeypot_hits: number;
  /** Times a click had to wait for its address block's rate limit before it went through. */
  waited_for_rate_limit: number;
}

export interface AppResult {
  name: string;
  app_id: string;
  app_key: string;
  server_key: string;
  probabilistic: boolean;
  partners: string[];
  clicks: ClickTally;
  installs: {
    planned: Partial<Record<InstallKind, number>>;
    expected: { deterministic: number; probabilistic: number; organic: number; reinstalls: number; fraud_flagged: number };
  };
  events: {
    accepted: number;
    rejected: number;
    batches: number;
    retried_identical: number;
    retried_reencoded: number;
    /** Accepted purchases sent as `revenue` + `currency` (EUR, JPY), converted by the service. */
    in_other_currencies: number;
  };
  purchases: number;
  revenue_usd: number;
  /**
   * Ad impressions sent (each once), the reports of them (duplicates included) by the SDK and by
   * the tenant's server, and their dollars as the oracle counts them (each impression once).
   */
  ad_revenue: { impressions: number; by_sdk: number; by_server: number; duplicates: number; usd: number };
  /** Days with installs, oldest first, and the whole period's D1/D7/D30 as the oracle counts them. */
  retention: { installs: number; d1: number; d7: number; d30: number };
  /** The app's time zone: its report days are local days in it. */
  time_zone: string;
  /** Cost rows uploaded (the last of each identity counts), requests, rows sent more than once. */
  cost: { rows: number; requests: number; restated: number; usd: number };
  /** The performance queries compared (empty when the report is not there). */
  performance_checks: string[];
  /** The App Store id Apple's postbacks name the app by. */
  app_store_id: string;
  /** Postbacks sent to POST /skan-postback (copies included), and how many of them were copies, tampered, or for an unknown app. */
  skan: { sent: number; transactions: number; copies: number; tampered: number; unknown_app: number; schema_versions: number[] };
  /** Install events that carried an AdServices token, by the answer the local stub gives it. */
  apple_ads: Partial<Record<AppleAdsAnswer['outcome'] | 'not_ready_first', number>>;
  expected: Reports;
  /** The SKAN report's rows as the simulator expects them (empty when no postback was sent). */
  expected_skan: ReportRow[];
}

export interface SimulationResult {
  seed: string;
  addressing: Addressing;
  base_url: string;
  company_key: string;
  started_ms: number;
  window: ReportWindow;
  apps: AppResult[];
  /** Everything that did not go as the simulator arranged, with --check the report differences too. */
  problems: string[];
  differences: (Difference & { app: string })[];
  checked: boolean;
  notes: string[];
  /** The parts of the service the run found, and so sent traffic for and checked. */
  features: {
    time_zones: boolean;
    currencies: boolean;
    cost: boolean;
    performance: boolean;
    skan: boolean;
    apple_ads: boolean;
    /** POST /api/v1/ad-revenue with a key of the `ad_revenue` scope (else every impression goes through the SDK). */
    ad_revenue_upload: boolean;
  };
}

interface AppState {
  plan: AppPlan;
  /** The zone the app was created with (UTC when the service took none). */
  timeZone: string;
  costKey?: string;
  /** A server key of the `ad_revenue` scope, for the impressions the tenant's server reports. */
  adRevenueKey?: string;
  /** Impressions for POST /api/v1/ad-revenue, sent once the round's SDK batches are. */
  serverImpressions: ServerImpression[];
  adRevenue: Omit<AppResult['ad_revenue'], 'usd'>;
  cost: AppResult['cost'];
  performanceChecks: string[];
  appId: string;
  credentials: AppCredentials;
  serverKey: string;
  linkIds: Map<string, string>;
  clicks: Map<string, ClickOutcome>;
  /** The clicks the service recorded, by click id. */
  recorded: Map<string, SentClick>;
  taken: OracleEvent[];
  seen: Set<string>;
  decisions: Map<string, ExpectedAttribution>;
  tally: ClickTally;
  events: AppResult['events'];
  appStoreId: string;
  /** Install events that carry an AdServices token, by `install_uuid|event_id`. */
  appleAds: Map<string, AppleAdsAnswer>;
  skan?: { plan: SkanPlan; sent: SentPostback[]; schemas: Map<number, SchemaFile>; versions: number[] };
}

interface ServerImpression {
  planned: PlannedEvent & { ad_revenue: AdImpression };
  tsMs: number;
  revenueUsd: number;
}

interface ClickOutcome {
  status: number;
  clickId?: string;
  referrer?: string;
  sentMs: number;
  answeredMs: number;
}

const STORE = {
  ios: (appStoreId: string) => `https://apps.apple.com/us/app/simulated-app/id${appStoreId}`,
  android: (n: number) => `https://play.google.com/store/apps/details?id=com.example.simulated${n}`,
  web: (n: number) => `https://example.com/simulated-app-${n}`,
};

export async function simulate(options: SimulateOptions): Promise<SimulationResult> {
  const log = options.log ?? (() => undefined);
  const admin = (args: string[]) => runAdmin(options.stack ? [...args, '--stack', options.stack] : args);
  const problems: string[] = [];
  const notes: string[] = [];
  const concurrency = options.concurrency ?? 8;
  const stallTimeoutMs = options.stallTimeoutMs ?? (options.stack ? 300_000 : 60_000);

  // The first app is made before the plan: its probe link tells how requests will be addressed.
  const company = await admin(['company', 'create', '--name', `Simulated traffic (seed ${options.seed})`, '--plan', 'paid']);
  const companyKey = String(company.company_key);
  const features: SimulationResult['features'] = {
    time_zones: true,
    currencies: false,
    cost: true,
    performance: false,
    skan: false,
    apple_ads: false,
    ad_revenue_upload: true,
  };
  // App Store ids are unique per service (app_store_id_taken): each run takes its own, from the
  // moment it starts (they name apps only; the plan still comes from the seed alone).
  const storeIdBase = 700_000_000_000 + (Date.now() % 1_000_000_000) * 100;
  const appStoreIdOf = (index: number) => String(storeIdBase + index + 1);
  const unknownAppStoreId = String(storeIdBase + 99);
  // Apple's transaction ids are unique too: each run's begin with its own 8 hex digits.
  const runId = (storeIdBase % 2 ** 32).toString(16).padStart(8, '0');
  const createApp = async (index: number, probabilistic: boolean, timeZone: string) => {
    const n = index + 1;
    // An app in another zone when the service has time zones (admin app create --time-zone).
    const zoneFlags = timeZone !== 'UTC' && features.time_zones ? ['--time-zone', timeZone] : [];
    const create = (flags: string[]) =>
      admin([
        'app',
        'create',
        '--company-key',
        companyKey,
        '--name',
        `Sim App ${n}`,
        '--ios-url',
        STORE.ios(appStoreIdOf(index)),
        '--android-url',
        STORE.android(n),
        '--web-url',
        STORE.web(n),
        ...(probabilistic ? ['--probabilistic'] : []),
        ...flags,
      ]);
    let app: Record<string, unknown>;
    let zone = zoneFlags.length ? timeZone : 'UTC';
    try {
      app = await create(zoneFlags);
    } catch (error) {
      if (!zoneFlags.length) throw error;
      features.time_zones = false;
      notes.push(`Time zones: admin app create --time-zone was refused (${(error as Error).message}); every app is on UTC days.`);
      app = await create([]);
      zone = 'UTC';
    }
    const key = await admin(['server-key', 'create', '--app-key', String(app.app_key)]);
    let costKey: string | undefined;
    if (features.cost) {
      try {
        costKey = String((await admin(['server-key', 'create', '--app-key', String(app.app_key), '--scope', 'cost'])).server_key);
      } catch (error) {
        features.cost = false;
        notes.push(`Cost: admin server-key create --scope cost was refused (${(error as Error).message}); no cost was sent.`);
      }
    }
    let adRevenueKey: string | undefined;
    if (features.ad_revenue_upload) {
      try {
        adRevenueKey = String(
          (await admin(['server-key', 'create', '--app-key', String(app.app_key), '--scope', 'ad_revenue'])).server_key,
        );
      } catch (error) {
        features.ad_revenue_upload = false;
        notes.push(
          `Ad revenue: admin server-key create --scope ad_revenue was refused (${(error as Error).message}); every impression went through the SDK.`,
        );
      }
    }
    return { app, serverKey: String(key.server_key), costKey, adRevenueKey, timeZone: zone };
  };
  const first = await createApp(0, false, timeZoneOf(0));
  const probe = await admin([
    'link',
    'create',
    '--app-key',
    String(first.app.app_key),
    '--partner',
    'sim_probe',
    '--countries-allow',
    'AQ',
  ]);
  const baseUrl = (options.baseUrl ?? String(probe.url).replace(/\/l\/[^/]+$/, '')).replace(/\/$/, '');
  const { addressing, click: probeClick } = await detectAddressing(baseUrl, String(probe.link_id));
  log(
    addressing === 'many'
      ? 'The service takes client addresses from X-Forwarded-For: people click and install from many addresses and countries.'
      : "Every request reaches the service from this machine's address (locally, start the runtime with TRUST_PROXY=1 for many):\n" +
          '  no data-centre, country, honeypot, click-flood or probabilistic traffic, and clicks kept under the rate limit.',
  );

  const startedMs = Date.now();
  const plan = planTraffic({
    seed: options.seed,
    apps: options.apps,
    days: options.days,
    installs: options.installs,
    nowMs: startedMs,
    addressing,
  });
  const states: AppState[] = [];
  for (const appPlan of plan.apps) {
    const made = appPlan.index === 0 ? first : await createApp(appPlan.index, appPlan.probabilistic, appPlan.timeZone);
    const linkIds = new Map<string, string>();
    for (const link of appPlan.links) {
      const created = await admin([
        'link',
        'create',
        '--app-key',
        String(made.app.app_key),
        '--partner',
        link.partner,
        ...(link.campaign ? ['--campaign', link.campaign] : []),
        ...(link.honeypot ? ['--honeypot'] : []),
        ...(link.countriesAllow ? ['--countries-allow', link.countriesAllow.join(',')] : []),
      ]);
      linkIds.set(link.key, String(created.link_id));
    }
    states.push({
      plan: appPlan,
      timeZone: made.timeZone,
      costKey: made.costKey,
      adRevenueKey: made.adRevenueKey,
      serverImpressions: [],
      adRevenue: { impressions: 0, by_sdk: 0, by_server: 0, duplicates: 0 },
      cost: { rows: 0, requests: 0, restated: 0, usd: 0 },
      performanceChecks: [],
      appId: String(made.app.app_id),
      credentials: { companyKey, appKey: String(made.app.app_key), signingSecret: String(made.app.signing_secret) },
      serverKey: made.serverKey,
      linkIds,
      clicks: new Map(),
      recorded: new Map(),
      taken: [],
      seen: new Set(),
      decisions: new Map(),
      tally: { sent: 0, recorded: 0, dropped: {}, rate_limited: 0, honeypot_hits: 0, waited_for_rate_limit: 0 },
      events: { accepted: 0, rejected: 0, batches: 0, retried_identical: 0, retried_reencoded: 0, in_other_currencies: 0 },
      appStoreId: appStoreIdOf(appPlan.index),
      // Apple Ads tokens only where local/adservices-stub.ts answers them: a deployed stack asks Apple.
      appleAds: options.stack
        ? new Map()
        : planAppleAds(new Random(`attribution-sim/${options.seed}/apple-ads/${appPlan.index}`), appPlan.people),
    });
  }
  // Exchange rates for every day events may fall on, set as an operator would: a file a day.
  const planned = planRates(addDays(utcDay(startedMs - options.days * DAY), -1), addDays(utcDay(startedMs), 1));
  const fx = await setRates(admin, planned, notes);
  features.currencies = fx !== undefined;
  const rates = fx?.table ?? planned;
  log(
    `Set up ${states.length} app(s) under company ${companyKey} (zones ${states.map((s) => s.timeZone).join(', ')}); ` +
      `${fx ? `${fx.set} days of exchange rates set (${fx.kept} kept as the service had them)` : 'no exchange rates (purchases in other currencies go as revenue_usd)'}; clicking...`,
  );

  // Clicks: one person's clicks in order (the honeypot before the blocked click, the last click
  // last); a flood from its /24 in one burst; different people at the same time.
  const honeypotBlocks = new Map<string, number>();
  for (const state of states) {
    const groups = new Map<string, ClickPlan[]>();
    for (const c of state.plan.clicks) {
      const group = c.purpose === 'flood' ? 'flood' : c.viewer.ip;
      groups.set(group, [...(groups.get(group) ?? []), c]);
    }
    await pool([...groups.values()], concurrency, async (group) => {
      for (const c of group) await sendClick(baseUrl, addressing, state, c, honeypotBlocks, problems, log);
    });
  }
  const window: ReportWindow = { sinceMs: startedMs - (options.days + 1) * DAY, untilMs: startedMs + 3 * HOUR };
  const clickTotal = states.reduce((n, s) => n + s.tally.sent, 0);
  log(`Sent ${clickTotal} clicks; sending events in rounds (each waits for the aggregator to count the one before)...`);

  // Events, round by round.
  const money = (found: SimulationResult['features']) => ({ rates, currencies: found.currencies });
  const rounds = plan.apps.flatMap((a) => a.people.flatMap((p) => p.batches)).reduce((last, b) => Math.max(last, b.round), 0);
  for (let round = 0; round <= rounds; round++) {
    const work = states.flatMap((state) => state.plan.people.map((person) => ({ state, person })));
    const sendingStarted = Date.now();
    await pool(work, concurrency, ({ state, person }) =>
      sendRound(baseUrl, addressing, state, person, round, honeypotBlocks, problems, money(features), features),
    );
    for (const state of states) await sendServerImpressions(baseUrl, state, money(features), problems);
    const waitingStarted = Date.now();
    for (const state of states) await waitForCounted(baseUrl, state, window, stallTimeoutMs, problems);
    log(
      `  round ${round + 1} of ${rounds + 1}: sent in ${seconds(waitingStarted - sendingStarted)}, counted ${seconds(Date.now() - waitingStarted)} later`,
    );
  }

  // Apple's postbacks, locally: signed with the keys the local runtime trusts beside Apple's
  // (local/skan-test-key.ts). A deployed stack trusts Apple's alone, so it gets none.
  if (options.stack) notes.push("SKAN: a deployed stack trusts only Apple's keys; no postbacks were sent.");
  else {
    const key: SigningKey = {
      skadnetwork: skadnetworkTestPrivateKey(),
      adAttributionKit: adAttributionKitTestPrivateKey(),
      kid: ADATTRIBUTIONKIT_TEST_KID,
    };
    for (const state of states) {
      const skanPlan = planSkan(new Random(`attribution-sim/${options.seed}/skan/${state.plan.index}`), {
        appStoreId: state.appStoreId,
        unknownAppStoreId,
        extra: Math.max(10, Math.round(options.installs / 2)),
        runId,
      });
      let setup: Awaited<ReturnType<typeof setUpSkan>>;
      try {
        // Every second app sets its App Store id; the others have it from their iOS store URL.
        setup = await setUpSkan(admin, state.credentials.appKey, state.appStoreId, skanPlan, state.plan.index % 2 === 1);
      } catch (error) {
        notes.push(`SKAN: the setup was refused (${(error as Error).message}); no postbacks were sent.`);
        break;
      }
      features.skan = true;
      const sent = await sendPostbacks(baseUrl, admin, state.credentials.appKey, skanPlan, setup, key, concurrency, (text) =>
        problems.push(`${state.plan.name}: ${text}`),
      );
      state.skan = { plan: skanPlan, sent, schemas: setup.schemas, versions: setup.versions };
      for (const problem of await checkSdkSchema(baseUrl, state.credentials, setup.versions[1], skanPlan.schemas[1]))
        problems.push(`${state.plan.name}: ${problem}`);
    }
    if (features.skan)
      log(`Sent ${states.reduce((n, s) => n + (s.skan?.sent.length ?? 0), 0)} SKAdNetwork and AdAttributionKit postbacks.`);
  }

  const checked: { state: AppState; result: AppResult; cells: PerfCells }[] = [];
  for (const state of states) {
    const cells: PerfCells = new Map();
    const oracle = oracleRows(
      state.taken,
      (event) => state.decisions.get(`${event.installUuid}|${event.eventId}`) ?? { partner: 'organic', type: 'organic', fraud: false },
      { timeZone: state.timeZone, performance: cells },
    );
    const probed = state.plan.index === 0 && probeClick ? [probeClick] : [];
    const ambiguous = addClicks(cells, [...state.recorded.values(), ...probed], state.timeZone);
    if (ambiguous > 0)
      problems.push(`${state.plan.name}: ${ambiguous} click(s) were answered across a local midnight: their day cannot be predicted`);
    // Ad spend, as the partners report it, for the installs they brought and some earlier days.
    if (state.costKey && features.cost) {
      const today = localDay(startedMs, state.timeZone);
      const history = Array.from({ length: Math.min(options.days, 30) }, (_, i) => addDays(today, -1 - i));
      const campaigns = Object.fromEntries(Object.entries(PARTNERS).map(([partner, p]) => [partner, p.campaigns]));
      const cpi = Object.fromEntries(
        Object.entries(PARTNERS)
          .filter(([partner]) => state.plan.links.some((l) => l.partner === partner))
          .map(([partner, p]) => [partner, p.cpiUsd]),
      );
      // Apple Ads installs are on past days (back-dated, Apple's click date): their spend too.
      if (state.appleAds.size > 0) cpi[APPLE_ADS_PARTNER] = APPLE_ADS_CPI_USD;
      const requests = planCost(
        new Random(`attribution-sim/${options.seed}/cost/${state.plan.index}`),
        cells,
        cpi,
        campaigns,
        history,
        features.currencies,
      );
      const accepted = await uploadCost(baseUrl, state, requests, problems);
      if (accepted === 'absent') {
        features.cost = false;
        notes.push('Cost: POST /api/v1/cost answered 404; no cost was sent.');
      } else {
        const final = lastAccepted(accepted);
        const unconvertible = addCost(cells, final.values(), rates);
        for (const row of unconvertible)
          problems.push(`${state.plan.name}: cost row ${row} has no exchange rate in the simulator's own table`);
        state.cost = {
          rows: final.size,
          requests: requests.length,
          restated: accepted.length - final.size,
          usd: [...cells.values()].reduce((n, c) => n + (c.cost_micros ?? 0), 0) / 1e6,
        };
      }
    }
    const skan = state.skan
      ? expectedSkan(state.skan.sent, state.skan.schemas, (id) => state.skan?.plan.networks[id] ?? id, state.timeZone)
      : { rows: [], ambiguous: 0, invalid: 0 };
    if (skan.ambiguous > 0)
      problems.push(
        `${state.plan.name}: ${skan.ambiguous} postback(s) were answered across a local midnight: their day cannot be predicted`,
      );
    checked.push({ state, cells, result: appResult(state, expectedReports(oracle), skan.rows) });
  }
  const results: AppResult[] = checked.map(({ result }) => result);
  notes.push(backdatingNote(plan, addressing));

  const differences: SimulationResult['differences'] = [];
  if (options.check) {
    log('Checking the four reports and the performance report of every app against what was sent...');
    for (const { state, result } of checked) {
      const { expected } = result;
      let found: Difference[] = [];
      // Reads are eventually consistent: a report may trail the aggregator by a second.
      for (let attempt = 0; attempt < 5; attempt++) {
        found = compareReports(expected, await fetchReports(baseUrl, state.serverKey, window));
        if (found.length === 0) break;
        await sleep(1000);
      }
      differences.push(...found.map((d) => ({ ...d, app: state.plan.name })));
    }
    // The SKAN report, of the apps that were sent postbacks.
    for (const { state, result } of checked) {
      if (!state.skan) continue;
      let found: Difference[] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        const actual = await fetchSkanReport(baseUrl, state.serverKey, window);
        if (actual === undefined) {
          notes.push('SKAN report: GET /api/v1/reports/skan answered 404; not checked.');
          break;
        }
        found = compareSkan(result.expected_skan, actual);
        if (found.length === 0) break;
        await sleep(1000);
      }
      differences.push(...found.map((d) => ({ ...d, app: state.plan.name })));
    }
    // The performance report, when the service has it: several group_by and filter combinations,
    // read from the day rows; then, locally, once more after the compactor built the day pages.
    // With one client address the service sees this machine's country (or none), which the simulator cannot know.
    const queries = PERF_QUERIES.filter((q) => addressing === 'many' || (!q.groupBy.includes('country') && !q.filters?.country));
    const comparePass = async (pass: string) => {
      for (const { state, result, cells } of checked) {
        for (const query of queries) {
          let perf: Difference[] = [];
          for (let attempt = 0; attempt < 3; attempt++) {
            const actual = await fetchPerformance(baseUrl, state.serverKey, window, query);
            if (actual === undefined) return;
            features.performance = true;
            perf = comparePerformance(query, expectedPerformance(cells, query, window, state.timeZone, Date.now()), actual);
            if (perf.length === 0) break;
            await sleep(1000);
          }
          state.performanceChecks.push(`${queryLabel(query)}${pass}`);
          result.performance_checks = state.performanceChecks;
          differences.push(...perf.map((d) => ({ ...d, report: `${d.report}${pass}`, app: state.plan.name })));
        }
      }
    };
    await comparePass('');
    if (!features.performance) notes.push('Performance report: GET /api/v1/reports/performance answered 404; not checked.');
    else if (!options.stack) {
      try {
        await admin(['schedule', 'run', 'performance-pages']);
        await comparePass(' (day pages)');
      } catch (error) {
        notes.push(`Performance report: the day pages were not checked (schedule run performance-pages: ${(error as Error).message}).`);
      }
    }
  }
  return {
    seed: options.seed,
    addressing,
    base_url: baseUrl,
    company_key: companyKey,
    started_ms: startedMs,
    window,
    apps: results,
    problems,
    differences,
    checked: options.check,
    notes,
    features,
  };
}

/**
 * The rates the service will convert with, over the plan's days and the 7 before them (the lookback
 * of the first): `admin fx set --date D --file rates.json` for each planned day that has no rates
 * yet, and the rates already there kept as they are, whoever set them (an operator's `admin fx set`
 * such as the README's, the daily ECB fetch of a deployment). Overwriting them would change the
 * conversion of other tenants' events, and ingest may still hold the old ones for minutes
 * (CachedFxRates in functions/adapters/fx-store.ts); the check converts by the table returned.
 * Undefined when the service has no exchange rates.
 */
async function setRates(
  admin: (args: string[]) => Promise<Record<string, unknown>>,
  planned: RateTable,
  notes: string[],
): Promise<{ table: RateTable; set: number; kept: number } | undefined> {
  const plannedDays = [...planned.keys()].sort();
  const first = plannedDays[0];
  const last = plannedDays[plannedDays.length - 1];
  if (first === undefined || last === undefined) return { table: planned, set: 0, kept: 0 };
  const table = new Map<string, Readonly<Record<string, number>>>();
  let set = 0;
  let kept = 0;
  const dir = await mkdtemp(join(tmpdir(), 'sim-fx-'));
  try {
    for (const day of daysFrom(addDays(first, -RATE_LOOKBACK_DAYS), last)) {
      const stored = await admin(['fx', 'show', '--date', day]).catch((error: Error) => error);
      const wanted = planned.get(day);
      if (!(stored instanceof Error) && isRates(stored.rates)) {
        table.set(day, stored.rates);
        if (wanted !== undefined) kept++;
      } else if (wanted !== undefined) {
        const file = join(dir, `${day}.json`);
        await writeFile(file, JSON.stringify(wanted));
        try {
          await admin(['fx', 'set', '--date', day, '--file', file]);
        } catch (error) {
          notes.push(
            `Currencies: admin fx set was refused (${(error as Error).message}); purchases in other currencies were sent as revenue_usd.`,
          );
          return undefined;
        }
        table.set(day, wanted);
        set++;
      }
    }
    return { table, set, kept };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const isRates = (value: unknown): value is Record<string, number> =>
  typeof value === 'object' && value !== null && Object.values(value).every((rate) => typeof rate === 'number');

/**
 * POST /api/v1/cost, request by request (1,000 rows at most each): the rows of the requests answered
 * 200, in order; 'absent' when the route answers 404. A refused request is a problem (all its rows
 * are refused with it, so none counts).
 */
async function uploadCost(
  baseUrl: string,
  state: AppState,
  requests: CostUpload[][],
  problems: string[],
): Promise<CostUpload[] | 'absent'> {
  const accepted: CostUpload[] = [];
  for (const rows of requests) {
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000);
      const response = await fetch(`${baseUrl}/api/v1/cost`, {
        method: 'POST',
        headers: { authorization: `Bearer ${state.costKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ rows: chunk }),
      });
      const body = (await response.json().catch(() => undefined)) as { accepted?: number; error?: string } | undefined;
      if (response.status === 404 && i === 0 && requests[0] === rows) return 'absent';
      if (response.status === 200) accepted.push(...chunk);
      if (response.status !== 200 || body?.accepted !== chunk.length)
        problems.push(`${state.plan.name}: POST /api/v1/cost of ${chunk.length} rows answered ${response.status} ${JSON.stringify(body)}`);
    }
  }
  return accepted;
}

/**
 * Whether the service takes the client's address from X-Forwarded-For (the local runtime with
 * TRUST_PROXY=1): a click on a link that admits only Antarctica, claiming to come from there, is
 * recorded only when the service believes the claim. Behind CloudFront it never does.
 */
async function detectAddressing(baseUrl: string, linkId: string): Promise<{ addressing: Addressing; click?: PerfClick }> {
  const sentMs = Date.now();
  const response = await fetch(`${baseUrl}/l/${linkId}`, {
    redirect: 'manual',
    headers: {
      'user-agent':
        'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      'x-forwarded-for': '192.0.2.1',
      'cloudfront-viewer-country': 'AQ',
    },
  });
  await response.arrayBuffer();
  if (!clickIdOf(response.headers.get('location')).clickId) return { addressing: 'one' };
  // A click like any other: the first app's performance report counts it.
  return { addressing: 'many', click: { partner: 'sim_probe', country: 'AQ', platform: 'ios', sentMs, answeredMs: Date.now() } };
}

function clickIdOf(location: string | null): { clickId?: string; referrer?: string } {
  if (!location) return {};
  const url = new URL(location);
  const referrer = url.searchParams.get('referrer');
  if (referrer !== null) return { clickId: new URLSearchParams(referrer).get('click_id') ?? undefined, referrer };
  return { clickId: url.searchParams.get('click_id') ?? undefined };
}

async function sendClick(
  baseUrl: string,
  addressing: Addressing,
  state: AppState,
  c: ClickPlan,
  honeypotBlocks: Map<string, number>,
  problems: string[],
  log: (line: string) => void,
): Promise<void> {
  const headers: Record<string, string> = { 'user-agent': c.userAgent, 'accept-language': 'en-US,en;q=0.9' };
  if (addressing === 'many') {
    headers['x-forwarded-for'] = c.viewer.ip;
    if (c.viewer.country) headers['cloudfront-viewer-country'] = c.viewer.country;
    if (c.viewer.asn) headers['cloudfront-viewer-asn'] = String(c.viewer.asn);
  }
  const url = `${baseUrl}/l/${state.linkIds.get(c.link)}?${new URLSearchParams(c.query)}`;
  for (;;) {
    const sentMs = Date.now();
    const response = await fetch(url, { redirect: 'manual', headers });
    const answeredMs = Date.now();
    await response.arrayBuffer();
    state.tally.sent++;
    if (response.status === 429 && c.expect !== 'recorded_or_rate_limited') {
      // A person whose tap hit the limit tries again a little later.
      const seconds = Number(response.headers.get('retry-after') ?? 5);
      state.tally.waited_for_rate_limit++;
      if (state.tally.waited_for_rate_limit === 1)
        log(`  the rate limit of this address block is spent: waiting ${seconds} s before clicking again`);
      await sleep(seconds * 1000 + 100);
      continue;
    }
    const { clickId, referrer } = clickIdOf(response.status === 302 ? response.headers.get('location') : null);
    const outcome: ClickOutcome = { status: response.status, clickId, referrer, sentMs, answeredMs };
    state.clicks.set(c.key, outcome);
    const got =
      response.status === 302
        ? clickId
          ? 'recorded'
          : 'dropped'
        : response.status === 404
          ? 'unknown_link'
          : response.status === 429
            ? 'rate_limited'
            : `status ${response.status}`;
    if (got === 'recorded' && clickId) {
      const link = state.plan.links.find((l) => l.key === c.link);
      if (link === undefined) throw new Error(`the plan's click ${c.key} names no link of the plan: ${c.link}`);
      state.tally.recorded++;
      state.recorded.set(clickId, {
        clickId,
        partner: link.partner,
        ...(link.campaign !== undefined ? { campaign: link.campaign } : {}),
        ...(addressing === 'many' && c.viewer.country ? { country: c.viewer.country } : {}),
        ip: c.viewer.ip,
        platform: c.platform,
        sentMs,
        answeredMs,
      });
    } else if (got === 'dropped') state.tally.dropped[c.purpose] = (state.tally.dropped[c.purpose] ?? 0) + 1;
    else if (got === 'rate_limited') state.tally.rate_limited++;
    else if (got === 'unknown_link') {
      state.tally.honeypot_hits++;
      if (c.purpose === 'honeypot' && addressing === 'many') honeypotBlocks.set(c.viewer.ip, answeredMs);
    }
    const fine = c.expect === 'recorded_or_rate_limited' ? got === 'recorded' || got === 'rate_limited' : got === c.expect;
    if (!fine) problems.push(`${state.plan.name}: a ${c.purpose} click (${c.platform}) was expected to be ${c.expect} but was ${got}`);
    return;
  }
}

async function sendRound(
  baseUrl: string,
  addressing: Addressing,
  state: AppState,
  person: PersonPlan,
  round: number,
  honeypotBlocks: Map<string, number>,
  problems: string[],
  money: { rates: RateTable; currencies: boolean },
  features: SimulationResult['features'],
): Promise<void> {
  const batches = person.batches.filter((b) => b.round === round);
  if (batches.length === 0) return;
  const ip = person.viewer.ip;
  const client = new EventClient({
    baseUrl,
    ...state.credentials,
    // The install's address matters to attribution (probabilistic matches, honeypot blocks).
    fetch:
      addressing === 'many'
        ? (input, init) => {
            const headers = new Headers(init?.headers);
            headers.set('x-forwarded-for', ip);
            // The install's country when no click gives one (docs/analytics.md, Dimensions).
            if (person.viewer.country) headers.set('cloudfront-viewer-country', person.viewer.country);
            return fetch(input, { ...init, headers });
          }
        : undefined,
  });
  const device = (serverMs: number) => serverMs + person.clockOffsetMs;
  const timeOf = (moment: Moment): number => {
    if ('at' in moment) return clearOfMidnight(moment.at, state.timeZone);
    const click = state.clicks.get(moment.click);
    if (!click) throw new Error(`the plan refers to click ${moment.click}, which was never made`);
    return clearOfMidnight((moment.from === 'sent' ? click.sentMs : click.answeredMs) + moment.ms, state.timeZone);
  };

  for (const batch of batches) {
    const facts: { planned: PlannedEvent; tsMs: number; revenueUsd?: number }[] = [];
    // An event that needs exchange rates the service does not have is left out.
    const sdkEvents = batch.events
      .filter((e) => money.currencies || e.malformed?.requires !== 'currencies')
      .flatMap((e) => {
        const tsMs = timeOf(e.time);
        // The dollars the simulator expects: as sent, or converted by its own rates at the event's UTC day.
        const priced = e.revenue ?? (e.ad_revenue ? { amount: e.ad_revenue.revenue, currency: e.ad_revenue.currency } : undefined);
        const converted = priced ? toMicroUsd(money.rates, priced.amount, priced.currency, tsMs) : undefined;
        if (priced && converted === undefined)
          throw new Error(`no exchange rate of ${priced.currency} for ${new Date(tsMs).toISOString()}`);
        const revenueUsd = converted !== undefined ? converted / 1e6 : e.revenue_usd;
        if (e.ad_revenue && e.via === 's2s' && !e.malformed && state.adRevenueKey) {
          state.serverImpressions.push({ planned: { ...e, ad_revenue: e.ad_revenue }, tsMs, revenueUsd: (converted ?? 0) / 1e6 });
          return [];
        }
        facts.push({ planned: e, tsMs, revenueUsd });
        if (e.malformed) return [{ ...e.malformed.event, ts_ms: device(tsMs) }];
        const event: Record<string, unknown> = {
          event_id: e.event_id,
          event_name: e.event_name,
          install_uuid: e.install_uuid,
          ts_ms: device(tsMs),
        };
        if (e.platform) event.platform = e.platform;
        if (e.device_id) event.device_id = e.device_id;
        if (e.revenue_usd !== undefined) event.revenue_usd = e.revenue_usd;
        if (e.revenue && money.currencies) {
          event.revenue = e.revenue.amount;
          event.currency = e.revenue.currency;
        } else if (e.revenue) event.revenue_usd = revenueUsd;
        if (e.properties && Object.keys(e.properties).length) event.properties = e.properties;
        if (e.ad_revenue) {
          event.ad_revenue = impressionAsSent(e.ad_revenue, converted ?? 0, money.currencies);
          state.adRevenue.by_sdk++;
        }
        let clickId: string | undefined;
        let installBeginMs: number | undefined;
        const click = e.attribution ? state.clicks.get(e.attribution.click) : undefined;
        // The SDK learns the click id only from a redirect that carried one.
        if (e.attribution && click?.clickId) {
          clickId = click.clickId;
          if (e.attribution.via === 'click_id') event.attribution = { click_id: click.clickId };
          else {
            installBeginMs = e.attribution.installBegin ? timeOf(e.attribution.installBegin) : undefined;
            event.attribution = {
              referrer: click.referrer ?? `click_id=${click.clickId}`,
              referrer_click_ms: device(click.sentMs),
              ...(installBeginMs !== undefined ? { install_begin_ms: device(installBeginMs) } : {}),
            };
          }
        }
        // An Apple Ads install: the token the app got from AdServices, answered by the local stub.
        const appleAds = e.event_name === 'install' ? state.appleAds.get(`${e.install_uuid}|${e.event_id}`) : undefined;
        const named = clickId !== undefined && e.attribution ? state.clicks.get(e.attribution.click) : undefined;
        if (appleAds) {
          event.attribution = { ...((event.attribution as object | undefined) ?? {}), adservices_token: tokenOf(appleAds, tsMs, named) };
          features.apple_ads = true;
        }
        if (e.event_name === 'install') {
          const key = `${e.install_uuid}|${e.event_id}`;
          if (!state.decisions.has(key)) {
            const tracked = expectedAttribution(
              { tsMs, platform: e.platform ?? person.platform, ip, clickId, installBeginMs },
              { probabilistic: state.plan.probabilistic, clicks: state.recorded },
              (address) => (addressing === 'many' ? honeypotBlocks.get(address) : undefined),
            );
            const decision = appleAds ? withAppleAds(tracked, appleAds, tsMs, named) : tracked;
            if (decision.ambiguous)
              problems.push(
                `${state.plan.name}: install ${e.install_uuid} came so close to a slow click that its attribution cannot be predicted (a heavily loaded service?)`,
              );
            state.decisions.set(key, decision);
          }
        }
        return [event];
      });
    // A batch whose impressions all went through the tenant's server: nothing for the SDK to send.
    if (sdkEvents.length === 0) continue;

    const sentAtMs = device(Date.now());
    const request = eventBatchRequest(state.credentials, buildBatch(sdkEvents, sentAtMs));
    const answer = await client.post('/event', request);
    state.events.batches++;
    if (answer.status !== 200) {
      problems.push(
        `${state.plan.name}: POST /event answered ${answer.status} ${JSON.stringify(answer.body)} (batch of ${sdkEvents.length})`,
      );
      continue;
    }
    const result = answer.body as EventBatchResult;
    for (const [i, { planned, tsMs, revenueUsd }] of facts.entries()) {
      const verdict = result.results[i];
      const wanted = planned.malformed ? `rejected ${planned.malformed.reason}` : 'accepted';
      const got = verdict ? `${verdict.status}${verdict.reason ? ` ${verdict.reason}` : ''}` : 'no result';
      if (wanted !== got)
        problems.push(`${state.plan.name}: event ${planned.event_name} ${planned.event_id} was expected ${wanted}, got ${got}`);
      if (planned.malformed) {
        state.events.rejected++;
        continue;
      }
      if (!recordTaken(state, planned, tsMs, revenueUsd, addressing === 'many' ? person.viewer.country : undefined)) continue;
      if (planned.revenue && money.currencies) state.events.in_other_currencies++;
    }

    if (batch.retry) {
      // The SDK did not see the answer and sends the batch again: byte for byte, or rebuilt later.
      const again =
        batch.retry === 'identical'
          ? request
          : eventBatchRequest(state.credentials, buildBatch([...sdkEvents].reverse(), device(Date.now())), { gzip: sdkEvents.length < 10 });
      const retried = await client.post('/event', again);
      if (batch.retry === 'identical') state.events.retried_identical++;
      else state.events.retried_reencoded++;
      const accepted = (retried.body as EventBatchResult | undefined)?.accepted ?? 0;
      const expectedAccepted = facts.filter((f) => !f.planned.malformed).length;
      if (retried.status !== 200 || accepted !== expectedAccepted) {
        problems.push(
          `${state.plan.name}: a retried batch was answered ${retried.status} with ${accepted} of ${sdkEvents.length} events accepted (expected ${expectedAccepted})`,
        );
      }
    }
  }
}

/**
 * An accepted event into the oracle's input, unless it was taken before (the same event id, or an
 * impression the install already has): whether it was new.
 */
function recordTaken(state: AppState, planned: PlannedEvent, tsMs: number, revenueUsd: number | undefined, country?: string): boolean {
  const taken: OracleEvent = {
    installUuid: planned.install_uuid,
    eventId: planned.event_id,
    name: planned.event_name,
    tsMs,
    revenueUsd,
    impressionId: planned.ad_revenue?.impression_id,
    deviceHash: planned.device_id,
    platform: planned.platform,
    country,
  };
  const identity = identityOf(taken);
  if (state.seen.has(identity)) {
    if (planned.ad_revenue) state.adRevenue.duplicates++;
    return false;
  }
  state.seen.add(identity);
  state.events.accepted++;
  if (planned.ad_revenue) state.adRevenue.impressions++;
  state.taken.push(taken);
  return true;
}

/** An impression as the app reports it: in its own currency, or in dollars when the service has no rates. */
function impressionAsSent(impression: AdImpression, micros: number, currencies: boolean): AdImpression {
  return currencies ? impression : { ...impression, revenue: micros / 1e6, currency: 'USD' };
}

/**
 * The round's impressions the tenant's server reports: POST /api/v1/ad-revenue (docs/ad-revenue.md)
 * in requests of at most 1,000, each answered impression by impression as POST /event answers.
 */
async function sendServerImpressions(baseUrl: string, state: AppState, money: { currencies: boolean }, problems: string[]): Promise<void> {
  const pending = state.serverImpressions.splice(0);
  for (let i = 0; i < pending.length; i += AD_REVENUE_BATCH) {
    const chunk = pending.slice(i, i + AD_REVENUE_BATCH);
    const impressions = chunk.map(({ planned, tsMs, revenueUsd }) => ({
      install_uuid: planned.install_uuid,
      ts_ms: tsMs,
      ...(planned.platform ? { platform: planned.platform } : {}),
      ad_revenue: impressionAsSent(planned.ad_revenue, Math.round(revenueUsd * 1e6), money.currencies),
    }));
    const response = await fetch(`${baseUrl}/api/v1/ad-revenue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${state.adRevenueKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ impressions }),
    });
    const body = (await response.json().catch(() => undefined)) as EventBatchResult | undefined;
    state.adRevenue.by_server += chunk.length;
    if (response.status !== 200 || !body) {
      problems.push(
        `${state.plan.name}: POST /api/v1/ad-revenue of ${chunk.length} impressions answered ${response.status} ${JSON.stringify(body)}`,
      );
      continue;
    }
    for (const [index, { planned, tsMs, revenueUsd }] of chunk.entries()) {
      const verdict = body.results[index];
      if (verdict?.status !== 'accepted') {
        problems.push(
          `${state.plan.name}: impression ${planned.ad_revenue.impression_id} sent to POST /api/v1/ad-revenue was ${JSON.stringify(verdict)}`,
        );
        continue;
      }
      recordTaken(state, planned, tsMs, revenueUsd);
    }
  }
}

/** Impressions per POST /api/v1/ad-revenue, the route's most (docs/ad-revenue.md). */
const AD_REVENUE_BATCH = 1_000;

/**
 * Waits until the events report has counted every event accepted so far (the aggregator is behind
 * ingestion by a second or two, or minutes after a big round on a busy machine). Gives up only when
 * the count stops moving for the stall time.
 */
async function waitForCounted(baseUrl: string, state: AppState, window: ReportWindow, stallMs: number, problems: string[]): Promise<void> {
  let counted = -1;
  let movedAt = Date.now();
  for (;;) {
    const now = countedEvents(await fetchReport(baseUrl, state.serverKey, 'events', window));
    if (now >= state.seen.size) return;
    if (now !== counted) [counted, movedAt] = [now, Date.now()];
    if (Date.now() - movedAt > stallMs) break;
    await sleep(250);
  }
  problems.push(
    `${state.plan.name}: the aggregator counted ${counted} of ${state.seen.size} accepted events and nothing more for ${Math.round(stallMs / 1000)} s`,
  );
}

function appResult(state: AppState, expected: Reports, expectedSkanRows: ReportRow[]): AppResult {
  const planned: Partial<Record<InstallKind, number>> = {};
  const installs = state.plan.people.flatMap((person) => person.installs);
  for (const kind of INSTALL_KINDS) {
    const n = installs.filter((install) => install.kind === kind).length;
    if (n) planned[kind] = n;
  }
  const sum = (rows: Reports[keyof Reports], column: string) => rows.reduce((n, row) => n + Number(row[column] ?? 0), 0);
  const byType = (type: string) =>
    expected.attribution.filter((r) => r.attribution_type === type).reduce((n, r) => n + Number(r.installs), 0);
  return {
    name: state.plan.name,
    app_id: state.appId,
    app_key: state.credentials.appKey,
    server_key: state.serverKey,
    probabilistic: state.plan.probabilistic,
    partners: [...new Set(state.plan.links.filter((l) => !l.honeypot).map((l) => l.partner))],
    clicks: state.tally,
    installs: {
      planned,
      expected: {
        deterministic: byType('deterministic'),
        probabilistic: byType('probabilistic'),
        organic: byType('organic'),
        reinstalls: sum(expected.attribution, 'reinstalls'),
        fraud_flagged: sum(expected.attribution, 'fraud_flagged'),
      },
    },
    events: state.events,
    purchases: sum(expected.revenue, 'purchases'),
    revenue_usd: Math.round(sum(expected.revenue, 'revenue_usd') * 1e6) / 1e6,
    ad_revenue: {
      ...state.adRevenue,
      usd:
        Math.round(
          sum(
            expected.events.filter((row) => row.event_name === 'ad_revenue'),
            'revenue_usd',
          ) * 1e6,
        ) / 1e6,
    },
    retention: {
      installs: sum(expected.cohorts, 'installs'),
      d1: sum(expected.cohorts, 'd1'),
      d7: sum(expected.cohorts, 'd7'),
      d30: sum(expected.cohorts, 'd30'),
    },
    time_zone: state.timeZone,
    cost: state.cost,
    performance_checks: state.performanceChecks,
    app_store_id: state.appStoreId,
    skan: skanTally(state),
    apple_ads: appleAdsTally(state),
    expected,
    expected_skan: expectedSkanRows,
  };
}

function skanTally(state: AppState): AppResult['skan'] {
  const sent = state.skan?.sent ?? [];
  const transactions = new Set(sent.map((s) => `${s.delivery.postback.kind}|${s.delivery.postback.id}`)).size;
  return {
    sent: sent.length,
    transactions,
    copies: sent.length - transactions,
    tampered: sent.filter((s) => s.delivery.tampered).length,
    unknown_app: sent.filter((s) => s.delivery.postback.unknownApp).length,
    schema_versions: [...new Set(state.skan?.versions ?? [])],
  };
}

function appleAdsTally(state: AppState): AppResult['apple_ads'] {
  const tally: AppResult['apple_ads'] = {};
  for (const answer of state.appleAds.values()) {
    tally[answer.outcome] = (tally[answer.outcome] ?? 0) + 1;
    if (answer.outcome === 'attributed' && answer.notReady > 0) tally.not_ready_first = (tally.not_ready_first ?? 0) + 1;
  }
  return tally;
}

function backdatingNote(plan: TrafficPlan, addressing: Addressing): string {
  const days = plan.options.days;
  return [
    `Back-dating: clicks can only happen now, and an install is credited only to a click made before it, so`,
    `every back-dated install (spread over the last ${days} days, with its sessions, purchases and reinstalls) is organic.`,
    `Click-driven installs happen right after their click instead: 15 s to 20 min later (2-5 s for the fast-CTIT fraud),`,
    `with their first session within 15 minutes, so their device timestamps run up to about 35 minutes ahead of the`,
    `server (the service accepts 1 hour). Partner rows are therefore all on today's date; the cohorts' D1/D7/D30 come from the organic history.`,
    addressing === 'one' ? "All requests came from this machine's address, so attribution never depended on addresses." : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** Keeps a time two seconds clear of a UTC and a local midnight, so its days never depend on the skew correction. */
function clearOfMidnight(ms: number, zone: string): number {
  return clearOfMidnights(ms, zone, 2_000);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
