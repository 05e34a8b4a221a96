import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { buildBatch, type EventBatchResult, EventClient, eventBatchRequest, type SdkEvent } from '../client/event-client';
import { AggregateStore } from '../functions/adapters/aggregate-store';
import { isConditionFailure } from '../functions/adapters/aws-errors';
import { LinkStore } from '../functions/adapters/link-store';
import { HORIZON_MS } from '../functions/domain/aggregation/click-counts';
import { pool } from '../functions/domain/common/pool';
import { dynamoClient, s3Client, sqsClient } from '../functions/shared/clients';
import { resourceName } from '../functions/shared/config';
import { type TableName, type TableSpec, tables } from '../lib/manifest';
import { invoke } from '../local/lambda';
import { startQueuePollers } from '../local/queue-pollers';
import { createTenant, type LocalStack } from '../test/support/local-stack';
import { MOBILE } from '../test/unit/links/user-agents';
import { type ClickTraffic, type EventTraffic, type Report, sized } from './support';

/**
 * What the service costs in DynamoDB writes, measured on the real protocol: the whole local
 * service (emulators, HTTP edge, the very handlers, the queue consumer) serves tracking-link clicks
 * and SDK-like event traffic, and a middleware on the shared DynamoDB client meters every write.
 *
 * Write units follow DynamoDB's on-demand billing: 1 per KB (rounded up) of the larger of the item
 * before and after the write, as the emulator reports it through ReturnConsumedCapacity; a write
 * refused by its condition still costs 1 (DynamoDB charges the existing item's size, at least 1:
 * every refused write here is on a claim or row of a few hundred bytes); and each global secondary
 * index the written item belongs to costs the same again (every index projects ALL, so its copy is
 * as large as the item). The emulator does not charge indexes, so the meter adds them.
 *
 * The busiest partition key bounds one app's throughput: DynamoDB serves at most 1,000 write units
 * a second on one partition, whatever the table's on-demand capacity.
 */

const PARTITION_WRITE_UNITS_PER_S = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60_000;

/** The traffic: clicks, then installs that each send an install batch and ~50-event batches. */
const CLICKS = sized(200, 40);
const BACKDATED_INSTALLS = sized(30, 6);
/** Days after the install on which a back-dated install sends a batch (covers d1 and d7 retention). */
const ACTIVE_DAYS = [0, 1, 2, 4, 7, 9];
/** Installs made after the clicks (a click must precede its install); their batches fit in the next hour. */
const CLICKED_INSTALLS = sized(10, 2);
const CLICKED_BATCH_OFFSETS_MS = [5, 15, 30].map((minutes) => minutes * MINUTE_MS);
const EVENTS_PER_BATCH = 50;
const CONCURRENCY = 8;

// ---------------------------------------------------------------------------------------------
// The meter

type WriteOperation = 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'BatchWriteItem';
const WRITE_OPERATIONS: ReadonlySet<string> = new Set<WriteOperation>(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
const READ_OPERATIONS: ReadonlySet<string> = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan']);

/**
 * Any other request AWS bills by the call, for bench/cost.ts: a DynamoDB read (its read units as
 * the emulator reports them: 0.5 per 4 KB read eventually consistent, 1 strongly), an S3 call, an
 * SQS call. `chunks` is what SQS bills a call as (one request per 64 KiB of payload); `bytes` the
 * payload put (an S3 PutObject's body, an SQS message's).
 */
export interface MeteredRequest {
  readonly writer: string;
  readonly service: 'dynamodb' | 's3' | 'sqs';
  readonly operation: string;
  readonly units: number;
  readonly bytes: number;
  /** Messages an SQS receive returned: a receive that returns none is a poller's idle cost, not traffic's. */
  readonly messages: number;
}

const SQS_CHUNK_BYTES = 64 * 1024;
const payloadBytes = (body: unknown): number =>
  typeof body === 'string' ? Buffer.byteLength(body) : body instanceof Uint8Array ? body.byteLength : 0;

export interface MeteredWrite {
  /** The function that made the write. */
  readonly writer: string;
  /** Logical table name, `<table>.<index>` for an index's copy. */
  readonly table: string;
  readonly operation: WriteOperation;
  /** `<table>:<partition key value>` (the index's key for an index copy): what a partition serves. */
  readonly partition: string;
  readonly units: number;
  readonly refused: boolean;
}

type Item = Record<string, unknown>;
const METER = 'benchWriteMeter';

/**
 * Meters every write of the shared DynamoDB client. DynamoDBDocumentClient shares its middleware
 * stack with the DynamoDBClient it wraps, so a middleware on it sees every command, document or
 * not. It sits at the initialize step: the input is still in document form there (the document
 * client marshals just before the serializer), which makes keys plain values, and adding
 * ReturnConsumedCapacity there reaches the wire. One logical call is one record (retries happen
 * further in, at finalizeRequest).
 *
 * The function that made a write is the AsyncLocalStorage store the queue consumer's invocation
 * runs in (writeUnitFigures starts the consumers), else the HTTP function of the current phase.
 */
export class WriteMeter {
  readonly writes: MeteredWrite[] = [];
  readonly requests: MeteredRequest[] = [];
  readonly writer = new AsyncLocalStorage<string>();
  private httpWriter = 'http';
  private readonly logicalName = new Map<string, TableName>();
  private readonly metered: { middlewareStack: { remove(name: string): boolean } }[] = [];

  /** Call once the runtime has pointed the environment at the emulators (it names the tables). */
  constructor(private readonly client: DynamoDBDocumentClient) {
    for (const name of Object.keys(tables) as TableName[]) this.logicalName.set(resourceName.table(name), name);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = (context.commandName ?? '').replace(/Command$/, '');
        if (READ_OPERATIONS.has(operation)) {
          const result = await next({ ...args, input: { ...(args.input as Item), ReturnConsumedCapacity: 'TOTAL' } as typeof args.input });
          const consumed = (result.output as Item).ConsumedCapacity as
            | { CapacityUnits?: number }
            | { CapacityUnits?: number }[]
            | undefined;
          const units = [consumed ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
          this.requests.push({ writer: this.currentWriter(), service: 'dynamodb', operation, units, bytes: 0, messages: 0 });
          return result;
        }
        if (!WRITE_OPERATIONS.has(operation)) return next(args);
        const input: Item = { ...(args.input as Item), ReturnConsumedCapacity: 'TOTAL' };
        try {
          const result = await next({ ...args, input: input as typeof args.input });
          this.recordDone(operation as WriteOperation, input, (result.output ?? {}) as Item);
          return result;
        } catch (error) {
          if (isConditionFailure(error)) this.recordRefused(operation as WriteOperation, input);
          throw error;
        }
      },
      { step: 'initialize', name: METER, priority: 'high' },
    );
  }

  /**
   * Counts every call of an S3 or SQS client too (the shared ones the handlers use, and the
   * queue pollers' own, which play the event source mapping whose calls AWS bills as well).
   */
  meter(service: 's3' | 'sqs', client: S3Client | SQSClient): void {
    (client.middlewareStack as S3Client['middlewareStack']).add(
      (next, context) => async (args) => {
        const result = await next(args);
        const operation = (context.commandName ?? '').replace(/Command$/, '');
        const input = args.input as Item;
        const output = (result.output ?? {}) as unknown as Item;
        const bytes =
          operation === 'SendMessageBatch'
            ? ((input.Entries ?? []) as Item[]).reduce((sum, entry) => sum + payloadBytes(entry.MessageBody), 0)
            : payloadBytes(input.Body ?? input.MessageBody);
        const messages = operation === 'ReceiveMessage' ? ((output.Messages ?? []) as unknown[]).length : 0;
        // SQS bills each 64 KiB of a call's payload as one request.
        const units = service === 'sqs' ? Math.max(1, Math.ceil(bytes / SQS_CHUNK_BYTES)) : 1;
        this.requests.push({ writer: this.currentWriter(), service, operation, units, bytes, messages });
        return result;
      },
      { step: 'initialize', name: METER, priority: 'high' },
    );
    this.metered.push(client);
  }

  /** Takes the meter off every client, so later phases' requests go unmetered and unchanged. */
  detach(): void {
    this.client.middlewareStack.remove(METER);
    for (const client of this.metered) client.middlewareStack.remove(METER);
  }

  /** Runs the work and returns the writes and other requests it made; those outside a queue consumer are `httpWriter`'s. */
  async during(httpWriter: string, work: () => Promise<void>): Promise<{ writes: MeteredWrite[]; requests: MeteredRequest[] }> {
    this.httpWriter = httpWriter;
    const from = this.writes.length;
    const fromRequests = this.requests.length;
    await work();
    return { writes: this.writes.slice(from), requests: this.requests.slice(fromRequests) };
  }

  private currentWriter(): string {
    return this.writer.getStore() ?? this.httpWriter;
  }

  private recordDone(operation: WriteOperation, input: Item, output: Item): void {
    if (operation === 'BatchWriteItem') {
      this.recordBatch(input, output);
      return;
    }
    const physical = String(input.TableName);
    const consumed = (output.ConsumedCapacity as { CapacityUnits?: number } | undefined)?.CapacityUnits;
    const units = consumed ?? 1;
    const key = (operation === 'PutItem' ? input.Item : input.Key) as Item;
    this.add(physical, operation, key, units, false);
    for (const index of this.indexesOf(physical, operation, input, output))
      this.add(physical, operation, index.key, units, false, index.name);
  }

  /** A refused write costs 1 and writes no index. */
  private recordRefused(operation: WriteOperation, input: Item): void {
    if (operation === 'BatchWriteItem') return; // a batch write has no condition
    this.add(String(input.TableName), operation, (operation === 'PutItem' ? input.Item : input.Key) as Item, 1, true);
  }

  /** Batch writes report units per table: shared evenly between the table's processed requests. */
  private recordBatch(input: Item, output: Item): void {
    const requests = input.RequestItems as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>;
    const unprocessed = (output.UnprocessedItems ?? {}) as Record<string, unknown[]>;
    const consumed = (output.ConsumedCapacity ?? []) as { TableName?: string; CapacityUnits?: number }[];
    for (const [physical, entries] of Object.entries(requests)) {
      const done = entries.length - (unprocessed[physical]?.length ?? 0);
      const total = consumed.find((c) => c.TableName === physical)?.CapacityUnits ?? done;
      for (const entry of entries.slice(0, done)) {
        const item = entry.PutRequest?.Item ?? (entry.DeleteRequest?.Key as Item);
        this.add(physical, 'BatchWriteItem', item, total / Math.max(done, 1), false);
        if (entry.PutRequest)
          for (const index of this.indexKeys(physical, item))
            this.add(physical, 'BatchWriteItem', index.key, total / Math.max(done, 1), false, index.name);
      }
    }
  }

  /**
   * The indexes the write touches. A put writes the indexes whose keys its item carries. An update
   * is judged on what it returns (ALL_NEW) with its key, else on whether its expression names an
   * index key attribute: an update that leaves the key alone on an item that already has it is
   * missed (none does here: the installs table's updates are on claims, never on the device item).
   * A delete is judged on its ALL_OLD return, if it asked for one.
   */
  private indexesOf(physical: string, operation: WriteOperation, input: Item, output: Item): { name: string; key: Item }[] {
    if (operation === 'PutItem') return this.indexKeys(physical, input.Item as Item);
    const returned = (output.Attributes ?? {}) as Item;
    if (operation === 'DeleteItem') return this.indexKeys(physical, returned);
    const named = new Set<string>([
      ...Object.values((input.ExpressionAttributeNames ?? {}) as Record<string, string>),
      ...String(input.UpdateExpression ?? '').split(/[^A-Za-z0-9_]+/),
    ]);
    const after: Item = { ...(input.Key as Item), ...returned };
    const spec = this.spec(physical);
    return (spec?.indexes ?? [])
      .filter((index) => index.partitionKey.name in after || named.has(index.partitionKey.name))
      .map((index) => ({
        name: index.name,
        key: { [index.partitionKey.name]: after[index.partitionKey.name] ?? '(named in the update)' },
      }));
  }

  private indexKeys(physical: string, item: Item): { name: string; key: Item }[] {
    return (this.spec(physical)?.indexes ?? [])
      .filter((index) => item[index.partitionKey.name] !== undefined && (!index.sortKey || item[index.sortKey.name] !== undefined))
      .map((index) => ({ name: index.name, key: { [index.partitionKey.name]: item[index.partitionKey.name] } }));
  }

  private spec(physical: string): TableSpec | undefined {
    const name = this.logicalName.get(physical);
    return name && (tables[name] as TableSpec);
  }

  private add(physical: string, operation: WriteOperation, key: Item, units: number, refused: boolean, index?: string): void {
    const table = this.logicalName.get(physical) ?? physical;
    const spec = this.spec(physical);
    const [firstAttribute] = Object.keys(key);
    const keyName = index ? firstAttribute : (spec?.partitionKey.name ?? firstAttribute);
    const name = index ? `${table}.${index}` : table;
    this.writes.push({
      writer: this.currentWriter(),
      table: name,
      operation,
      partition: `${name}:${String(keyName === undefined ? undefined : key[keyName])}`,
      units,
      refused,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Sums

export const unitsOf = (writes: readonly MeteredWrite[]) => writes.reduce((sum, write) => sum + write.units, 0);

export function unitsBy(writes: readonly MeteredWrite[], keyOf: (write: MeteredWrite) => string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const write of writes) sums.set(keyOf(write), (sums.get(keyOf(write)) ?? 0) + write.units);
  return new Map([...sums].sort((a, b) => b[1] - a[1]));
}

/**
 * What a write is for: the aggregates table's family (`aggregates#perf_stamp`, from its partition
 * key `<app_id>#<family>`), else its table or index (docs/analytics.md, "Where a click's write units go").
 */
export function familyOf(write: MeteredWrite): string {
  if (write.table !== 'aggregates') return write.table;
  const family = write.partition.split('#').slice(1).join('#');
  return `aggregates#${family || '(none)'}`;
}

const per = (sums: Map<string, number>, count: number): Record<string, number> =>
  Object.fromEntries([...sums].map(([key, units]) => [key, round(units / count)]));
const round = (n: number, digits = 3) => Number(n.toFixed(digits));
const listed = (shares: Record<string, number>) =>
  Object.entries(shares)
    .map(([key, value]) => `${key} ${value.toFixed(3)}`)
    .join(', ');

/** What bench/cost.ts prices per accepted event, from a metered run of event traffic: its writes, its other requests, the aggregator's calls and the bytes on the wire. */
export function eventTraffic(run: {
  readonly accepted: number;
  readonly batches: number;
  readonly writes: readonly MeteredWrite[];
  readonly requests: readonly MeteredRequest[];
  readonly aggregator: { readonly calls: number; readonly ms: number };
  readonly bytes: { readonly request: number; readonly response: number };
}): EventTraffic {
  const { accepted, aggregator } = run;
  const perEvent = (n: number) => round(n / accepted, 6);
  const billed = billedRequests(run.requests);
  return {
    http_requests: perEvent(run.batches),
    dynamodb_write_units: perEvent(unitsOf(run.writes)),
    dynamodb_read_units: perEvent(billed.dynamodbReadUnits),
    s3_tier1_requests: perEvent(billed.s3Tier1),
    s3_tier2_requests: perEvent(billed.s3Tier2),
    sqs_requests: perEvent(billed.sqs),
    aggregator_invocations: perEvent(aggregator.calls),
    aggregator_ms_per_invocation: round(aggregator.ms / Math.max(aggregator.calls, 1), 1),
    request_bytes: round(run.bytes.request / accepted, 1),
    response_bytes: round(run.bytes.response / accepted, 1),
    audit_bytes: round(billed.s3PutBytes / accepted, 1),
  };
}

/** The traffic's billed requests other than DynamoDB writes, summed. */
export function billedRequests(requests: readonly MeteredRequest[]) {
  const sum = (keep: (request: MeteredRequest) => boolean, value: (request: MeteredRequest) => number = (request) => request.units) =>
    requests.filter(keep).reduce((total, request) => total + value(request), 0);
  return {
    dynamodbReadUnits: sum((r) => r.service === 'dynamodb'),
    // S3 bills PUT, COPY, POST and LIST at one price and GET, HEAD and the rest at another; deletes are free.
    s3Tier1: sum((r) => r.service === 's3' && /^(Put|Copy|Post|List|CreateMultipart|UploadPart|CompleteMultipart)/.test(r.operation)),
    s3Tier2: sum(
      (r) => r.service === 's3' && !/^(Put|Copy|Post|List|CreateMultipart|UploadPart|CompleteMultipart|Delete)/.test(r.operation),
    ),
    s3PutBytes: sum(
      (r) => r.service === 's3' && r.operation === 'PutObject',
      (r) => r.bytes,
    ),
    // An empty receive is a poller's idle cost (the event source mapping long-polls whatever the
    // traffic), not the traffic's; nor is GetQueueAttributes, which only the local pollers' drain
    // sends here (local/queue-pollers.ts): the event source mapping and this traffic's handlers send none.
    sqs: sum((r) => r.service === 'sqs' && !(r.operation === 'ReceiveMessage' && r.messages === 0) && r.operation !== 'GetQueueAttributes'),
  };
}

/**
 * HTTP/1.1 bytes of a request as sent: request line, headers, blank line, body. The CloudFront and
 * API Gateway response headers (date, request ids, via, x-cache, x-amz-cf-*) are not on the local
 * edge's answers, so an event response counts a fixed RESPONSE_HEADER_BYTES for them.
 */
export const RESPONSE_HEADER_BYTES = 400;
export function requestBytes(method: string, path: string, headers: Record<string, string>, bodyBytes: number): number {
  const lines = Object.entries({ host: 'xxxxxxxxxxxxxx.cloudfront.net', ...headers, 'content-length': String(bodyBytes) }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  return Buffer.byteLength(`${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`) + bodyBytes;
}
function responseBytes(response: Response, bodyBytes: number): number {
  let bytes = Buffer.byteLength(`HTTP/1.1 ${response.status} ${response.statusText}\r\n\r\n`) + bodyBytes;
  response.headers.forEach((value, name) => {
    bytes += Buffer.byteLength(`${name}: ${value}\r\n`);
  });
  return bytes + RESPONSE_HEADER_BYTES;
}

// ---------------------------------------------------------------------------------------------
// The traffic

/** The events after an install: sessions and level-ups, a purchase now and then, one a minute apart. */
function activity(installUuid: string, batch: number, fromMs: number, stepMs: number): SdkEvent[] {
  return Array.from({ length: EVENTS_PER_BATCH }, (_, i): SdkEvent => {
    const event: SdkEvent = {
      event_id: `${installUuid.slice(0, 8)}-${batch}-${i}`,
      event_name: i % 5 === 0 ? 'session' : 'level_up',
      install_uuid: installUuid,
      ts_ms: fromMs + i * stepMs,
    };
    if (i % 20 === 7) Object.assign(event, { event_name: 'purchase', revenue_usd: i % 40 === 7 ? 0.99 : 4.99 });
    return event;
  });
}

interface InstallPlan {
  readonly installUuid: string;
  readonly batches: SdkEvent[][];
  readonly events: number;
}

/**
 * The installs table keeps everything of one install under `<app_id>#<install_uuid>`, and its
 * by_device index is keyed by one device (functions/domain/aggregation/install-state.ts).
 */
export const isPerInstall = (write: MeteredWrite) => write.table === 'installs' || write.table === 'installs.by_device';

function installPlan(index: number, nowMs: number, clickId?: string): InstallPlan {
  const installUuid = randomUUID();
  const platform = clickId || index % 2 === 0 ? 'ios' : 'android';
  const installMs = clickId ? nowMs + MINUTE_MS : nowMs - 10 * DAY_MS + index * 7 * MINUTE_MS;
  const install: SdkEvent = {
    event_id: `${installUuid.slice(0, 8)}-install`,
    event_name: 'install',
    install_uuid: installUuid,
    ts_ms: installMs,
    platform,
  };
  if (index % 2 === 1) install.device_id = `device-${installUuid}`;
  if (clickId) install.attribution = { click_id: clickId };
  const first: SdkEvent = {
    event_id: `${installUuid.slice(0, 8)}-first`,
    event_name: 'session',
    install_uuid: installUuid,
    ts_ms: installMs + 1000,
  };
  const later = clickId
    ? CLICKED_BATCH_OFFSETS_MS.map((offset, batch) => activity(installUuid, batch, installMs + offset, 10_000))
    : ACTIVE_DAYS.map((day, batch) => activity(installUuid, batch, installMs + day * DAY_MS + 60 * MINUTE_MS, MINUTE_MS));
  const batches = [[install, first], ...later];
  return { installUuid, batches, events: batches.reduce((sum, batch) => sum + batch.length, 0) };
}

/**
 * Runs the traffic against a fresh local service (started with trustProxy, so clicks can come
 * from many addresses) and reports the write units. The runtime's own queue pollers are replaced
 * by the same pollers (local/queue-pollers.ts, local/lambda.ts) started here, so that each
 * consumer invocation runs in an AsyncLocalStorage naming its function: the meter then tells the
 * aggregator's writes from ingestion's, however the two interleave. The queues are drained and
 * the meter detached when it returns; the runtime's pollers stay stopped.
 */
/**
 * The queue consumers of a metered phase: each function's invocation runs as its writer, so the
 * meter names who made each write, and the aggregator's calls, audit objects and time are counted.
 */
export function meteredConsumers(stack: LocalStack, sqs: SQSClient, meter: WriteMeter) {
  const aggregator = { calls: 0, objects: 0, ms: 0 };
  const consumers = startQueuePollers({
    sqs,
    queueUrls: stack.endpoints.queues,
    onError: (error) => console.error(error),
    invoke: async (name, event) => {
      const started = performance.now();
      try {
        return await meter.writer.run(name, () => invoke(name, event));
      } finally {
        if (name === 'aggregator') {
          aggregator.calls++;
          aggregator.objects += event.Records.length;
          aggregator.ms += performance.now() - started;
        }
      }
    },
  });
  return { consumers, aggregator };
}

export async function writeUnitFigures(report: Report, stack: LocalStack): Promise<void> {
  const sqs = new SQSClient({ region: stack.endpoints.region, endpoint: stack.endpoints.sqs });
  let consumers: ReturnType<typeof startQueuePollers> | undefined;
  const meter = new WriteMeter(dynamoClient());
  meter.meter('s3', s3Client());
  meter.meter('sqs', sqsClient());
  meter.meter('sqs', sqs);
  try {
    await stack.pollers.stop();
    const { consumers: queueConsumers, aggregator } = meteredConsumers(stack, sqs, meter);
    consumers = queueConsumers;

    const { app, company } = await createTenant({ plan: 'paid' });
    const link = await new LinkStore(resourceName.table('links')).create(app, { partner: 'acme_ads', campaign: 'spring' });
    const anonymous = (partition: string) =>
      partition
        .replaceAll(app.app_id, '<app_id>')
        .replaceAll(company.company_id, '<company_id>')
        .replace(/#\d{4}-\d{2}$/, '#<yyyy-mm>');

    // The earlier phases' clicks (another tenant in the same runtime) are counted first, unmetered:
    // the lane counts every app's, and these figures are this phase's clicks' alone.
    await new Promise((resolve) => setTimeout(resolve, HORIZON_MS + 1_000));
    for (let runs = 0; runs < 20; runs++) {
      const run = (await stack.scheduler.run('lane-sweep')) as { clicks?: { clicks?: number } };
      if ((run.clicks?.clicks ?? 0) === 0) break;
    }

    // Clicks: an iPhone each, every one from its own /24 so the rate limit never refuses one.
    const clickIds: string[] = [];
    const clickBytes = { request: 0, response: 0 };
    const { writes: clickWrites, requests: clickRequests } = await meter.during('link-redirect', () =>
      pool(
        Array.from({ length: CLICKS }, (_, i) => i),
        CONCURRENCY,
        async (i) => {
          const path = `/l/${link.link_id}`;
          const headers = {
            'user-agent': MOBILE.iosSafari,
            'x-forwarded-for': `10.${16 + (i >> 8)}.${i & 255}.23`,
            'cloudfront-viewer-country': 'US',
          };
          const response = await fetch(`${stack.baseUrl}${path}`, { redirect: 'manual', headers });
          const body = Buffer.from(await response.arrayBuffer());
          clickBytes.request += requestBytes('GET', path, headers, 0);
          clickBytes.response += responseBytes(response, body.length);
          const clickId = new URL(response.headers.get('location') ?? 'http://none/').searchParams.get('click_id');
          if (clickId) clickIds.push(clickId);
        },
      ),
    );
    if (clickIds.length === 0) throw new Error('no click was recorded');
    // The click-count lane (ADR 0008) counts the clicks from the log on the lane sweep's schedule,
    // once they are HORIZON_MS old: its writes (per apply and counter item, not per click) are the
    // clicks' too. Polled until every recorded click is counted.
    let laneCounted = 0;
    const { writes: laneWrites } = await meter.during('lane-sweep', async () => {
      for (const deadline = Date.now() + 60_000; laneCounted < clickIds.length && Date.now() < deadline; ) {
        const run = (await stack.scheduler.run('lane-sweep')) as { clicks?: { clicks?: number } };
        laneCounted += run.clicks?.clicks ?? 0;
        if (laneCounted < clickIds.length) await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    });
    if (laneCounted !== clickIds.length) throw new Error(`the click-count lane counted ${laneCounted} of ${clickIds.length} clicks`);
    clickWrites.push(...laneWrites);

    // SDK-like traffic: back-dated installs with batches over ten days, and installs from the clicks.
    const nowMs = Date.now();
    const plans = [
      ...Array.from({ length: BACKDATED_INSTALLS }, (_, i) => installPlan(i, nowMs)),
      ...Array.from({ length: CLICKED_INSTALLS }, (_, i) => installPlan(BACKDATED_INSTALLS + i, nowMs, clickIds[i % clickIds.length])),
    ];
    const credentials = { companyKey: company.company_key, appKey: app.app_key, signingSecret: app.signing_secret };
    const client = new EventClient({ baseUrl: stack.baseUrl, ...credentials });
    let accepted = 0;
    let batches = 0;
    const eventBytes = { request: 0, response: 0 };
    const { writes: eventWrites, requests: eventRequests } = await meter.during('ingest', async () => {
      await pool(plans, CONCURRENCY, async (plan) => {
        for (const batch of plan.batches) {
          // As EventClient.sendEvents sends it, with the bytes on the wire counted for bench/cost.ts.
          const request = eventBatchRequest(credentials, buildBatch(batch));
          const response = await client.post('/event', request);
          const result = response.body as EventBatchResult;
          if (response.status !== 200 || result.rejected > 0)
            throw new Error(
              `the bench's batch was refused in part: ${response.status} ${JSON.stringify(result.results?.find((r) => r.status === 'rejected') ?? result)}`,
            );
          eventBytes.request += requestBytes('POST', '/event', request.headers, request.body.length);
          eventBytes.response += RESPONSE_HEADER_BYTES + Buffer.byteLength(JSON.stringify(result));
          accepted += result.accepted;
          batches++;
        }
      });
      await queueConsumers.drain();
    });
    const ingestWrites = eventWrites.filter((write) => write.writer === 'ingest');
    const aggregationWrites = eventWrites.filter((write) => write.writer === 'aggregator');
    // The meter must have seen both functions: a client rebuilt without it would read as free
    // writes. Ingestion writes nothing to DynamoDB for a company without a cap (the aggregator
    // meters it), so its audit objects' S3 PUTs are what show the meter saw it.
    const ingestPuts = eventRequests.filter((request) => request.writer === 'ingest' && request.service === 's3');
    if (ingestPuts.length === 0 || aggregationWrites.length === 0)
      throw new Error('the write meter missed ingestion or aggregation writes');
    // Per accepted event means every one of them counted: the events report must add up.
    const counted = (await new AggregateStore(resourceName.table('aggregates')).rows(app.app_id, 'events')).reduce(
      (sum, row) => sum + Number(row.events ?? 0),
      0,
    );
    if (counted !== accepted) throw new Error(`the aggregator counted ${counted} of ${accepted} accepted events`);

    const clicks = clickIds.length;
    report(`clicks recorded / sent`, `${clicks} / ${CLICKS}`, { clicks_recorded: clicks });
    report('write units per click', (unitsOf(clickWrites) / clicks).toFixed(3), { wcu_per_click: round(unitsOf(clickWrites) / clicks) });
    report('  of them the click-count lane', (unitsOf(laneWrites) / clicks).toFixed(3), {
      wcu_per_click_lane: round(unitsOf(laneWrites) / clicks),
    });
    const clickByTable = per(
      unitsBy(clickWrites, (write) => write.table),
      clicks,
    );
    report('  by table', listed(clickByTable), { wcu_per_click_by_table: clickByTable });
    const clickByFamily = per(unitsBy(clickWrites, familyOf), clicks);
    report('  by family', listed(clickByFamily), { wcu_per_click_by_family: clickByFamily });

    report(`events accepted (${plans.length} installs, ${batches} batches)`, accepted.toLocaleString('en-US'), {
      events_accepted: accepted,
      event_batches: batches,
    });
    report('write units per accepted event: ingestion', (unitsOf(ingestWrites) / accepted).toFixed(3), {
      wcu_per_event_ingest: round(unitsOf(ingestWrites) / accepted),
    });
    report('write units per accepted event: aggregation', (unitsOf(aggregationWrites) / accepted).toFixed(3), {
      wcu_per_event_aggregation: round(unitsOf(aggregationWrites) / accepted),
    });
    const eventByTable = per(
      unitsBy(eventWrites, (write) => write.table),
      accepted,
    );
    const byOperation = per(
      unitsBy(eventWrites, (write) => `${write.table} ${write.operation}${write.refused ? ' refused' : ''}`),
      accepted,
    );
    report('write units per accepted event: total', (unitsOf(eventWrites) / accepted).toFixed(3), {
      wcu_per_event: round(unitsOf(eventWrites) / accepted),
      wcu_per_event_by_table: eventByTable,
      wcu_per_event_by_operation: byOperation,
    });
    for (const [table, share] of Object.entries(eventByTable)) report(`  ${table}`, share.toFixed(3), {});

    // Partition keys of one install (or device) take that install's events only, so their load
    // follows one device, whatever the app's traffic; the app-wide keys take a share of all of it.
    const appWide = unitsBy(
      eventWrites.filter((write) => !isPerInstall(write)),
      (write) => write.partition,
    );
    const [hottestEntry] = appWide;
    if (hottestEntry === undefined) throw new Error('the traffic made no write to an app-wide partition key');
    const [hottest, hottestUnits] = hottestEntry;
    const hotRatio = hottestUnits / accepted;
    const perInstallUnits = unitsBy(eventWrites.filter(isPerInstall), (write) => write.partition);
    const installRatio = Math.max(
      ...plans.map((plan) => (perInstallUnits.get(`installs:${app.app_id}#${plan.installUuid}`) ?? 0) / plan.events),
    );
    report('audit objects per aggregator call', (aggregator.objects / Math.max(aggregator.calls, 1)).toFixed(1), {
      audit_objects_per_aggregator_call: round(aggregator.objects / Math.max(aggregator.calls, 1), 1),
    });
    report('busiest install partition key (units / event of that install)', installRatio.toFixed(3), {
      writes_per_install_event_install_key: round(installRatio),
    });
    report('hottest app-wide partition key (units / event)', `${hotRatio.toFixed(4)} (${anonymous(hottest)})`, {
      hottest_key: anonymous(hottest),
      writes_per_event_hottest_key: round(hotRatio, 4),
      writes_per_event_by_app_key: Object.fromEntries(
        [...appWide].slice(0, 6).map(([key, units]) => [anonymous(key), round(units / accepted, 4)]),
      ),
    });
    report(
      'events/s one app sustains under 1,000 units/s per key',
      Math.floor(PARTITION_WRITE_UNITS_PER_S / hotRatio).toLocaleString('en-US'),
      {
        events_per_s_before_hot_key_limit: Math.floor(PARTITION_WRITE_UNITS_PER_S / hotRatio),
      },
    );

    // Every other billed request of the same traffic, per accepted event and per click (bench/cost.ts prices them).
    const trafficPerEvent = eventTraffic({
      accepted,
      batches,
      writes: eventWrites,
      requests: eventRequests,
      aggregator,
      bytes: eventBytes,
    });
    const clickBilled = billedRequests(clickRequests);
    const trafficPerClick: ClickTraffic = {
      http_requests: 1,
      dynamodb_write_units: round(unitsOf(clickWrites) / clicks, 6),
      dynamodb_read_units: round(clickBilled.dynamodbReadUnits / clicks, 6),
      request_bytes: round(clickBytes.request / clicks, 1),
      response_bytes: round(clickBytes.response / clicks, 1),
    };
    report(
      'per accepted event: read units / S3 PUT / S3 GET / SQS requests',
      [
        trafficPerEvent.dynamodb_read_units.toFixed(3),
        trafficPerEvent.s3_tier1_requests.toFixed(4),
        trafficPerEvent.s3_tier2_requests.toFixed(4),
        trafficPerEvent.sqs_requests.toFixed(4),
      ].join(' / '),
      { rru_per_event: round(trafficPerEvent.dynamodb_read_units), traffic_per_event: trafficPerEvent },
    );
    report(
      'aggregator: invocations per 1,000 events / ms per invocation',
      `${(trafficPerEvent.aggregator_invocations * 1000).toFixed(2)} / ${trafficPerEvent.aggregator_ms_per_invocation.toFixed(0)}`,
      {},
    );
    report('per click: read units', trafficPerClick.dynamodb_read_units.toFixed(3), {
      rru_per_click: round(trafficPerClick.dynamodb_read_units),
      traffic_per_click: trafficPerClick,
    });
  } finally {
    await consumers?.stop();
    sqs.destroy();
    meter.detach();
  }
}
