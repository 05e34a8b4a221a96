import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppCredentials } from '../client/event-client';
import { pool } from '../functions/domain/common/pool';
import { signBody } from '../functions/domain/ingest/signature';
import { type Delivery, postbackBody, type SchemaFile, type SentPostback, type SigningKey, type SkanPlan } from './skan';

/**
 * The iOS part of a run that talks to the service: an app's App Store id, ad network mappings
 * and schema versions through the admin CLI's code, Apple's postbacks to POST /skan-postback, and
 * the schema as the SDK reads it (GET /sdk/v1/skan-schema). What the reports should say of it is
 * sim/skan.ts's; nothing here reads the service's tables.
 */

export type Admin = (args: string[]) => Promise<Record<string, unknown>>;

/** What an app's SKAN setup left: the schema of each version number the service gave. */
export interface SkanSetup {
  schemas: Map<number, SchemaFile>;
  /** The version the service gave each of the plan's two schemas, in order. */
  versions: [number, number];
}

/**
 * `admin app update --app-store-id` (when the id was not taken from the iOS store URL),
 * `admin skan network set` for each mapped ad network, and `admin skan schema set` of the plan's
 * first schema. Throws what the admin CLI threw: the caller says SKAN is not there.
 */
export async function setUpSkan(admin: Admin, appKey: string, appStoreId: string, plan: SkanPlan, explicitId: boolean): Promise<SkanSetup> {
  if (explicitId) await admin(['app', 'update', '--app-key', appKey, '--app-store-id', appStoreId]);
  for (const [adNetworkId, partner] of Object.entries(plan.networks))
    await admin(['skan', 'network', 'set', '--app-key', appKey, '--ad-network-id', adNetworkId, '--partner', partner]);
  const first = await setSchema(admin, appKey, plan.schemas[0]);
  return { schemas: new Map([[first, plan.schemas[0]]]), versions: [first, first] };
}

/** `admin skan schema set --file` of a schema: the version the service stored it as. */
export async function setSchema(admin: Admin, appKey: string, schema: SchemaFile): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'sim-skan-'));
  try {
    const file = join(dir, 'schema.json');
    await writeFile(file, JSON.stringify(schema, null, 2));
    const answer = await admin(['skan', 'schema', 'set', '--app-key', appKey, '--file', file]);
    const version = Number(answer.version);
    if (!Number.isInteger(version) || version < 1) throw new Error(`skan schema set answered version ${String(answer.version)}`);
    return version;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Sends the plan's deliveries: phase 0, then the second schema version, then phase 1. The copies of
 * one transaction id go one after another, in the plan's order (Apple retries after an answer it
 * did not see, never at the same moment); different ids side by side. A 503 is sent again, as
 * Apple would; any other answer but 200 is a problem.
 */
export async function sendPostbacks(
  baseUrl: string,
  admin: Admin,
  appKey: string,
  plan: SkanPlan,
  setup: SkanSetup,
  key: SigningKey,
  concurrency: number,
  problem: (text: string) => void,
): Promise<SentPostback[]> {
  const sent: SentPostback[] = [];
  const send = async (delivery: Delivery, schemaVersion: number) => {
    const body = JSON.stringify(postbackBody(delivery, key));
    for (let attempt = 1; ; attempt++) {
      const sentMs = Date.now();
      const response = await fetch(`${baseUrl}/skan-postback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const answer = await response.text();
      const answeredMs = Date.now();
      if (response.status === 503 && attempt < 4) {
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
        continue;
      }
      if (response.status !== 200)
        problem(`POST /skan-postback of ${delivery.postback.kind} ${delivery.postback.id} answered ${response.status} ${answer}`);
      sent.push({ delivery, schemaVersion, status: response.status, sentMs, answeredMs });
      return;
    }
  };
  for (const phase of [0, 1] as const) {
    if (phase === 1) {
      const second = await setSchema(admin, appKey, plan.schemas[1]);
      setup.schemas.set(second, plan.schemas[1]);
      setup.versions[1] = second;
    }
    const version = setup.versions[phase];
    const groups = new Map<string, Delivery[]>();
    for (const d of plan.deliveries.filter((d) => d.phase === phase)) {
      const id = `${d.postback.kind}|${d.postback.id}`;
      groups.set(id, [...(groups.get(id) ?? []), d]);
    }
    await pool([...groups.values()], concurrency, async (group) => {
      for (const d of group) await send(d, version);
    });
  }
  // The oracle takes deliveries in the order the service took them.
  return sent.sort((a, b) => a.answeredMs - b.answeredMs);
}

/**
 * The schema as the app's SDK reads it (GET /sdk/v1/skan-schema, signed over the empty body): the
 * active version with the ranges set, and 304 for its ETag. Returns what did not hold.
 */
export async function checkSdkSchema(baseUrl: string, credentials: AppCredentials, version: number, schema: SchemaFile): Promise<string[]> {
  const url = `${baseUrl}/sdk/v1/skan-schema`;
  const base = {
    'x-service-company-key': credentials.companyKey,
    'x-service-app-key': credentials.appKey,
    'x-service-signature': signBody(credentials.signingSecret, Buffer.alloc(0)),
  };
  const response = await fetch(url, { headers: base });
  const body = (await response.json().catch(() => undefined)) as
    | {
        version?: number;
        fine?: { value: number; revenue_usd: number[] }[];
        coarse?: { window: number; value: string; revenue_usd: number[] }[];
      }
    | undefined;
  if (response.status !== 200 || body === undefined) return [`GET /sdk/v1/skan-schema answered ${response.status}`];
  const problems: string[] = [];
  if (body.version !== version) problems.push(`GET /sdk/v1/skan-schema gave version ${body.version}, expected ${version}`);
  const ranges = (entries: { revenue_usd: number[] }[] | undefined, id: (e: never) => string) =>
    new Map((entries ?? []).map((e) => [id(e as never), e.revenue_usd.join('-')]));
  const fineId = (e: { value: number }) => String(e.value);
  const coarseId = (e: { window: number; value: string }) => `${e.window}/${e.value}`;
  const same = (a: Map<string, string>, b: Map<string, string>) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
  if (
    !same(ranges(body.fine, fineId), ranges(schema.fine, fineId)) ||
    !same(ranges(body.coarse, coarseId), ranges(schema.coarse, coarseId))
  )
    problems.push('GET /sdk/v1/skan-schema gave other values or ranges than the schema set');
  const etag = response.headers.get('etag');
  const again = await fetch(url, { headers: { ...base, ...(etag ? { 'if-none-match': etag } : {}) } });
  await again.arrayBuffer();
  if (again.status !== 304) problems.push(`GET /sdk/v1/skan-schema with If-None-Match ${etag} answered ${again.status}, expected 304`);
  return problems;
}
