// docs/openapi.yaml kept honest four ways: against lib/manifest.ts (the same routes, no more, no
// fewer), against the code (every error code the code can produce, on the operation and status
// that produce it, and none it cannot), against itself (every example validates against its
// schema) and against the running service (real answers of the local stack validate against the
// documented response for their status). What the document marks `x-implemented: false` is
// listed as todo and checked to be really absent from the code.

import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { EventClient, type SignedRequest, signedRequest } from '../../client/event-client';
import { LinkStore } from '../../functions/adapters/link-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { COST_ERRORS, COST_FIELDS, COST_PATH, MAX_COST_ROWS } from '../../functions/domain/analytics/cost';
import { PERFORMANCE_ERRORS } from '../../functions/domain/analytics/performance-report';
import { FIRST_LAUNCH_ERRORS } from '../../functions/domain/attribution/first-launch';
import { DAY_MS } from '../../functions/domain/common/days';
import { BINDINGS } from '../../functions/domain/health/health';
import { AD_REVENUE_ERRORS, AD_REVENUE_PATH } from '../../functions/domain/ingest/ad-revenue-upload';
import {
  BATCH_FIELDS,
  EVENT_API_ERRORS,
  type EventApiErrorCode,
  MAX_DECOMPRESSED_BYTES,
  MAX_EVENTS_PER_BATCH,
  MAX_RAW_BODY_BYTES,
} from '../../functions/domain/ingest/event-api';
import { EVENT_FAULT_FIELDS, EVENT_RULES } from '../../functions/domain/ingest/event-validation';
import { STREAM_ERRORS, STREAM_PATH } from '../../functions/domain/raw-data/stream';
import { DEFAULT_LIMIT, MAX_LIMIT, REPORT_ERRORS } from '../../functions/domain/reports/report-query';
import { REPORT_NAMES, REPORT_ROUTES, REPORTS_PREFIX } from '../../functions/domain/reports/reports';
import { newAppKey, newCompanyKey } from '../../functions/domain/tenants/keys';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { type FunctionSpec, functions } from '../../lib/manifest';
import { problemsOf as documentedProblems } from '../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { type DocumentedResponse, OpenApi, type Operation, pointerOf } from '../support/openapi';
import { countingWrites } from '../support/write-faults';
import { MOBILE } from '../unit/links/user-agents';
import { credentialsOf, signedBytes, validEvent } from './ingest-support';

const ROOT = join(__dirname, '..', '..');
const api = new OpenApi();
const operations = api.operations();

// ---- What the code can answer ----------------------------------------------------------------

/** A documented error as "<status> <code>", e.g. "401 bad_signature". */
type StatusCode = string;
const pair = (status: number | string, code: string): StatusCode => `${status} ${code}`;
const codeOf = (statusCode: StatusCode) => statusCode.split(' ')[1];
const pairsOf = (table: Readonly<Record<string, number>>) => Object.entries(table).map(([code, status]) => pair(status, code));
const unique = <T>(items: Iterable<T>) => [...new Set(items)].sort();

/**
 * The codes a source file can answer: literal `new ServiceError(404, 'unknown_link'` and
 * `json(500, { error: 'internal_error' })`, and the typed helpers whose status comes from a table.
 */
const LITERALS = [/new ServiceError\(\s*(\d{3}),\s*'([a-z_]+)'/g, /json\(\s*(\d{3}),\s*\{\s*error:\s*'([a-z_]+)'/g];
const TABLED: [RegExp, Readonly<Record<string, number>>][] = [
  [/new EventApiError\(\s*'([a-z_]+)'/g, EVENT_API_ERRORS],
  [/reportError\(\s*'([a-z_]+)'/g, REPORT_ERRORS],
  [/new FirstLaunchError\(\s*'([a-z_]+)'/g, FIRST_LAUNCH_ERRORS],
];

function codesIn(file: string): StatusCode[] {
  const source = readFileSync(join(ROOT, file), 'utf8');
  return unique([
    ...LITERALS.flatMap((pattern) => [...source.matchAll(pattern)].map(([, status, code]) => pair(status, code))),
    ...TABLED.flatMap(([pattern, table]) => [...source.matchAll(pattern)].map(([, code]) => pair(table[code] ?? 'unknown', code))),
  ]);
}

function sourceFiles(dir = join(ROOT, 'functions')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

/**
 * The deployed console's API is not the service's: its own HTTP API with a JWT authorizer
 * (ADR 0007), whose answers docs/console.md lists ("The deployed console"), not docs/openapi.yaml.
 */
const CONSOLE_API_FILES = ['functions/console-api.ts'];

/** Everything the code can answer: the three tables, and every code written out across functions/. */
const CODE_ERRORS = unique([
  ...pairsOf(EVENT_API_ERRORS),
  ...pairsOf(REPORT_ERRORS),
  ...pairsOf(STREAM_ERRORS),
  ...pairsOf(COST_ERRORS),
  ...pairsOf(AD_REVENUE_ERRORS),
  ...pairsOf(PERFORMANCE_ERRORS),
  ...pairsOf(FIRST_LAUNCH_ERRORS),
  ...sourceFiles()
    .filter((file) => !CONSOLE_API_FILES.includes(file))
    .flatMap(codesIn),
]);

const manifestFunctions = Object.values(functions) as readonly FunctionSpec[];
const MANIFEST_ROUTES = manifestFunctions.flatMap((spec) => spec.routes ?? []);
const functionServing = (route: string) => manifestFunctions.find((spec) => spec.routes?.includes(route));

/** Every routed function is wrapped by httpHandler, whose error middleware answers these on any route. */
const HTTP_EDGE = 'functions/shared/http.ts';
const REPORTS_FALLBACK_ROUTE = `ANY ${REPORTS_PREFIX}/{proxy+}`;
const REPORT_PATHS: readonly string[] = REPORT_ROUTES.map((name) => `${REPORTS_PREFIX}/${name}`);
/** The reports' routing answers: the fallback's, not the report functions' (docs/architecture.md section 1). */
const ROUTING_CODES = ['unknown_report', 'method_not_allowed'];

/**
 * The event API's table serves two endpoints; these codes belong to one of them only
 * (docs/ingestion.md, steps 12 to 15). Every other code of the table is answered by both.
 */
const EVENT_API_ONLY: Record<string, readonly EventApiErrorCode[]> = {
  'POST /event': ['bad_batch_shape', 'cap_exceeded', 'audit_write_failed'],
  'POST /privacy/delete': ['bad_install_uuid', 'queue_write_failed'],
};

/** What the code says an operation (by its route) can answer. */
function expectedErrors(op: Operation): StatusCode[] {
  const own = (): StatusCode[] => {
    // One route answers every path's preflight (functions/cors-preflight.ts), whatever the path's own operations answer.
    if (op.route === 'OPTIONS /{proxy+}') return codesIn('functions/shared/cors.ts');
    if (op.route in EVENT_API_ONLY) {
      const othersOnly = Object.entries(EVENT_API_ONLY).flatMap(([route, codes]) => (route === op.route ? [] : codes));
      return pairsOf(EVENT_API_ERRORS).filter((error) => !othersOnly.includes(codeOf(error) as EventApiErrorCode));
    }
    if (op.route === REPORTS_FALLBACK_ROUTE || op.route === '$default') {
      // The fallback serves both routes. Under the reports prefix a known report with a method
      // other than GET is 405 and anything else 404 unknown_report; any other path is its own 404.
      const entry = functionServing(op.route)?.entry;
      const fallbackCodes = entry ? codesIn(entry) : [];
      if (op.path !== REPORTS_PREFIX && !op.path.startsWith(`${REPORTS_PREFIX}/`)) {
        return fallbackCodes.filter((error) => !ROUTING_CODES.includes(codeOf(error)));
      }
      const code = REPORT_PATHS.includes(op.path) ? 'method_not_allowed' : 'unknown_report';
      return fallbackCodes.filter((error) => codeOf(error) === code);
    }
    // The performance report: the four reports' refusals and its own (performance-report.ts).
    if (op.method === 'GET' && op.path === `${REPORTS_PREFIX}/performance`) {
      return [...pairsOf(REPORT_ERRORS).filter((error) => !ROUTING_CODES.includes(codeOf(error))), ...pairsOf(PERFORMANCE_ERRORS)];
    }
    if (op.method === 'GET' && REPORT_PATHS.includes(op.path)) {
      return pairsOf(REPORT_ERRORS).filter((error) => !ROUTING_CODES.includes(codeOf(error)));
    }
    // The stream's refusals come from its use case (functions/domain/raw-data/stream.ts), as one table.
    if (op.method === 'GET' && op.path === STREAM_PATH) return pairsOf(STREAM_ERRORS);
    // The cost upload's too (functions/domain/analytics/cost.ts), the reports' 401s and 403 among them.
    if (op.method === 'POST' && op.path === COST_PATH) return pairsOf(COST_ERRORS);
    // The ad revenue route's (functions/domain/ingest/ad-revenue-upload.ts): the reports' key, the event API's batch.
    if (op.method === 'POST' && op.path === AD_REVENUE_PATH) return pairsOf(AD_REVENUE_ERRORS);
    // The SKAN schema for the SDK authenticates as the event API does, over an empty body it signs.
    if (op.method === 'GET' && op.path === '/sdk/v1/skan-schema') {
      const authentication = codesIn('functions/domain/ingest/event-auth.ts').filter((error) => codeOf(error) !== 'empty_body');
      return [...authentication, ...codesIn(functionServing(op.route)?.entry ?? '')];
    }
    // The first-launch routes authenticate as the event API does (the GET over the empty body it
    // signs, as the SKAN schema; the POST with its body handling), then refuse with their own table.
    if (op.path === '/sdk/v1/attribution') {
      const post = op.method === 'POST';
      const authentication = codesIn('functions/domain/ingest/event-auth.ts').filter((error) => post || codeOf(error) !== 'empty_body');
      const body = post ? codesIn('functions/domain/ingest/batch-body.ts').filter((error) => codeOf(error) !== 'bad_batch_shape') : [];
      const own = pairsOf(FIRST_LAUNCH_ERRORS).filter((error) => post || codeOf(error) !== 'bad_attribution_request');
      return [...authentication, ...body, ...own];
    }
    const spec = functionServing(op.route);
    return spec ? codesIn(spec.entry) : [];
  };
  return unique([...own(), ...codesIn(HTTP_EDGE)]);
}

/** What the document says an operation answers, leaving out responses marked not implemented. */
function documentedErrors(op: Operation): StatusCode[] {
  return unique(
    api
      .responses(op)
      .filter((response) => response.implemented)
      .flatMap((response) => response.codes.map((code) => pair(response.status, code))),
  );
}

const implemented = operations.filter((op) => op.implemented);
/** Each response object once (shared components are referenced from many operations). */
const distinct = (responses: DocumentedResponse[]) => [...new Map(responses.map((response) => [response.pointer, response])).values()];
const documentedResponses = distinct(operations.flatMap((op) => api.responses(op)));
const pendingOperations = operations.filter((op) => !op.implemented);
/** Responses marked not implemented on operations that are. */
const pendingResponses = distinct(implemented.flatMap((op) => api.responses(op))).filter((response) => !response.implemented);

// ---- The document against the manifest, the code and itself ---------------------------------

describe('docs/openapi.yaml', () => {
  it('is an OpenAPI 3.1 document whose every $ref resolves and whose operationIds are unique', () => {
    expect(api.doc.openapi).toMatch(/^3\.1\.\d+$/);
    const broken = [...api.walk()].filter(({ node }) => typeof node.$ref === 'string' && api.at(node.$ref.slice(1)) === undefined);
    expect(broken.map(({ pointer, node }) => `${pointer}: ${node.$ref}`)).toEqual([]);
    const ids = operations.map((op) => op.spec.operationId).filter((id): id is string => typeof id === 'string');
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents exactly the routes of lib/manifest.ts, the reports fallback and $default included', () => {
    expect(unique(implemented.map((op) => op.route))).toEqual(unique(MANIFEST_ROUTES));
  });

  it('documents every error code the code can produce on the operation and status that produce it, and no other', () => {
    const byOperation = (codes: (op: Operation) => StatusCode[]) => Object.fromEntries(implemented.map((op) => [op.key, codes(op)]));
    expect(byOperation(documentedErrors)).toEqual(byOperation(expectedErrors));
  });

  it('documents the reports fallback on every method but GET of each report and on every method of any other name', () => {
    const refused = ['POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
    const expected = [
      ...REPORT_PATHS.flatMap((path) => refused.map((method) => `${method} ${path}`)),
      ...['GET', ...refused].map((method) => `${method} ${REPORTS_PREFIX}/{name}`),
    ];
    expect(unique(implemented.filter((op) => op.route === REPORTS_FALLBACK_ROUTE).map((op) => op.key))).toEqual(unique(expected));
  });

  it('documents no error code the code cannot produce, and leaves none out', () => {
    const documented = unique(implemented.flatMap(documentedErrors));
    expect(documented.filter((error) => !CODE_ERRORS.includes(error))).toEqual([]);
    expect(CODE_ERRORS.filter((error) => !documented.includes(error))).toEqual([]);
  });

  it('gives every error response one example per code, named after it', () => {
    const mismatches = documentedResponses
      .filter((response) => response.codes.length > 0)
      .flatMap((response) => {
        const examples = (response.spec.content['application/json'].examples ?? {}) as Record<string, { value?: { error?: string } }>;
        const names = unique(Object.keys(examples));
        const wrong = Object.entries(examples)
          .filter(([name, example]) => example.value?.error !== name)
          .map(([name]) => name);
        return names.join() === unique(response.codes).join() && wrong.length === 0
          ? []
          : [
              `${response.pointer}: codes ${unique(response.codes).join()}, examples ${names.join()}${wrong.length ? `, misnamed ${wrong.join()}` : ''}`,
            ];
      });
    expect(mismatches).toEqual([]);
  });

  it('has examples that validate against their schemas', () => {
    let checked = 0;
    const problems: string[] = [];
    for (const { node, pointer } of api.walk()) {
      if (node.schema === undefined) continue;
      const values: [string, unknown][] = 'example' in node ? [[`${pointer}/example`, node.example]] : [];
      for (const [name, raw] of Object.entries((node.examples ?? {}) as Record<string, object>)) {
        const { node: example } = api.resolve(raw as Record<string, unknown>, `${pointer}${pointerOf('examples', name)}`);
        values.push([`${pointer}${pointerOf('examples', name)}`, example.value]);
      }
      for (const [where, value] of values) {
        checked++;
        problems.push(...api.validate(`${pointer}/schema`, value).map((problem) => `${where}: ${problem}`));
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('uses only the formats the validator knows', () => {
    // An example's values are data, not schema: an ad impression's `format` (rewarded) is no string format.
    const schemas = [...api.walk()].filter(({ pointer }) => !pointer.includes('/examples/') && !pointer.endsWith('/example'));
    const formats = unique(schemas.map(({ node }) => node.format).filter((format): format is string => typeof format === 'string'));
    expect(formats.filter((format) => !OpenApi.knownFormats.includes(format))).toEqual([]);
  });

  it('agrees with the code on the enumerations and limits they share', () => {
    const schemas = api.doc.components.schemas;
    const parameters = api.doc.components.parameters;
    expect(unique(schemas.RejectionReason.enum)).toEqual(unique(EVENT_RULES.map((rule) => rule.reason)));
    expect(schemas.EventFaultField.enum).toEqual([...EVENT_FAULT_FIELDS]);
    expect(schemas.EventRequestError.properties.field.enum).toEqual([...BATCH_FIELDS]);
    expect(schemas.HealthReport.properties.bindings.required).toEqual([...BINDINGS]);
    expect(schemas.EventBatch.properties.events.maxItems).toBe(MAX_EVENTS_PER_BATCH);
    expect(schemas.CostUpload.properties.rows.maxItems).toBe(MAX_COST_ROWS);
    expect(schemas.CostUploadError.properties.field.enum).toEqual(['rows', ...COST_FIELDS]);
    expect(Object.keys(schemas.CostRow.properties)).toEqual([...COST_FIELDS]);
    expect(parameters.Limit.schema).toMatchObject({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT });
    const reportPaths = Object.keys(api.doc.paths).filter((path) => path.startsWith(`${REPORTS_PREFIX}/`) && !path.includes('{'));
    expect(unique(reportPaths)).toEqual(unique(REPORT_PATHS));
    expect(unique(api.doc.paths[`${REPORTS_PREFIX}/{name}`].parameters[0].schema.not.enum)).toEqual(unique(REPORT_ROUTES));
  });

  it("lets a field stand beside the code only on POST /event's 400 bad_batch_shape: every other error body, the Reporting API's included, is the code alone", () => {
    const withField: string[] = [];
    const problems: string[] = [];
    for (const op of implemented) {
      for (const response of api.responses(op).filter((documented) => documented.codes.length > 0)) {
        const schema = `${response.pointer}${pointerOf('content', 'application/json', 'schema')}`;
        for (const code of response.codes) {
          problems.push(...api.validate(schema, { error: code }).map((problem) => `${op.key} ${response.status} ${code}: ${problem}`));
          if (BATCH_FIELDS.some((field) => api.validate(schema, { error: code, field }).length === 0))
            withField.push(`${op.key} ${response.status} ${code}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(withField).toEqual(['POST /event 400 bad_batch_shape']);
    expect(
      api.validate(`${pointerOf('components', 'schemas', 'EventRequestError')}`, { error: 'bad_batch_shape', field: 'ts_ms' }),
    ).not.toEqual([]);
  });

  it('marks as not implemented only what the code does not serve yet', () => {
    for (const op of pendingOperations) expect(MANIFEST_ROUTES).not.toContain(op.route);
    const served = pendingResponses
      .flatMap((response) => response.codes)
      .filter((code) => CODE_ERRORS.some((error) => codeOf(error) === code));
    expect(served).toEqual([]);
  });

  describe('documented ahead of the code (x-implemented: false)', () => {
    for (const op of pendingOperations) it.todo(`${op.key}`);
    for (const response of pendingResponses) it.todo(`${response.status} ${response.codes.join(', ')} (${response.pointer})`);
  });
});

// ---- The document against the running service -----------------------------------------------

interface Answer {
  method: string;
  /** The path without its query: what selects the operation. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

/** What an answer breaks of the document (test/support/documented-answers.ts, the reliability suite's rule too). */
const problemsOf = (answer: Answer): string[] => documentedProblems(api, { ...answer, headers: Object.fromEntries(answer.headers) });

/** The answer has this status (and error code), and is what the document says of that status. */
function expectDocumented(answer: Answer, status: number, code?: string) {
  let error: unknown;
  try {
    error = (JSON.parse(answer.text) as { error?: unknown }).error;
  } catch {
    error = undefined;
  }
  expect({ status: answer.status, error, problems: problemsOf(answer) }).toEqual({ status, error: code, problems: [] });
}

describe('the local stack answers as docs/openapi.yaml says', () => {
  let stack: LocalStack;
  let tenant: Tenant;

  beforeAll(async () => {
    // One click per /24 and window, so a second click shows the 429 (read when the link function loads).
    process.env.LINK_RATE_LIMIT = '1';
    stack = await startLocalStack({ trustProxy: true });
    tenant = await createTenant({ plan: 'paid' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  async function call(
    method: string,
    target: string,
    init: { headers?: Record<string, string>; body?: Buffer | string } = {},
  ): Promise<Answer> {
    const url = new URL(target, stack.baseUrl);
    const response = await fetch(url, { method, headers: init.headers, body: init.body, redirect: 'manual' });
    return { method, path: url.pathname, status: response.status, headers: response.headers, text: await response.text() };
  }

  const send = (path: string, request: SignedRequest) => call('POST', path, { headers: request.headers, body: request.body });
  const signed = (payload: unknown, as: Tenant = tenant) => signedRequest(credentialsOf(as), payload);
  const batchOf = (events: unknown[]) => ({ events, sent_at_ms: Date.now() });
  const withHeaders = (request: SignedRequest, headers: Record<string, string>): SignedRequest => ({
    ...request,
    headers: { ...request.headers, ...headers },
  });
  const withoutSignature = (request: SignedRequest): SignedRequest => {
    const { 'x-service-signature': _dropped, ...headers } = request.headers;
    return { ...request, headers };
  };

  describe('the event API', () => {
    /** A valid body for each endpoint, so that only the refusal under test fails. */
    const validBody: Record<string, () => unknown> = {
      '/event': () => batchOf([validEvent()]),
      '/privacy/delete': () => ({ install_uuid: randomUUID() }),
    };

    it('POST /event: 200 with one result per event, a rejected one with its reason', async () => {
      const install = randomUUID();
      const events = [
        validEvent({ event_name: 'install', install_uuid: install, revenue_usd: undefined }),
        validEvent({ install_uuid: install }),
        validEvent({ event_id: 'not an id' }),
      ];
      expectDocumented(await send('/event', signed(batchOf(events))), 200);
    });

    it('POST /privacy/delete: 202 queued', async () => {
      expectDocumented(await send('/privacy/delete', signed({ install_uuid: randomUUID() })), 202);
    });

    const refusals: [string, (path: string) => Promise<SignedRequest>][] = [
      ['missing_auth_headers', async (path) => withoutSignature(signed(validBody[path]()))],
      ['empty_body', async () => signedBytes(tenant, Buffer.alloc(0))],
      ['bad_json', async () => signedBytes(tenant, Buffer.from('{"events": ['))],
      ['bad_gzip', async () => signedBytes(tenant, Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' })],
      ['unknown_app_key', async (path) => withHeaders(signed(validBody[path]()), { 'x-service-app-key': newAppKey() })],
      ['unknown_company_key', async (path) => withHeaders(signed(validBody[path]()), { 'x-service-company-key': newCompanyKey() })],
      [
        'app_company_mismatch',
        async (path) => withHeaders(signed(validBody[path]()), { 'x-service-company-key': (await createTenant()).company.company_key }),
      ],
      [
        'company_suspended',
        async (path) => {
          const suspended = await createTenant();
          await new TenantStore(resourceName.table('tenants')).setCompanySuspended(suspended.company.company_key, true);
          return signed(validBody[path](), suspended);
        },
      ],
      ['bad_signature', async (path) => withHeaders(signed(validBody[path]()), { 'x-service-signature': 'f'.repeat(64) })],
      ['body_too_large', async () => signedBytes(tenant, Buffer.alloc(MAX_RAW_BODY_BYTES + 1, 0x20))],
      [
        'decompressed_too_large',
        async () => signedBytes(tenant, gzipSync(Buffer.alloc(MAX_DECOMPRESSED_BYTES + 1, 0x20)), { 'content-encoding': 'gzip' }),
      ],
      ['unsupported_content_encoding', async (path) => withHeaders(signed(validBody[path]()), { 'content-encoding': 'br' })],
    ];

    describe.each(['/event', '/privacy/delete'])('POST %s refuses', (path) => {
      it.each(refusals)('%s as documented', async (code, request) => {
        expectDocumented(await send(path, await request(path)), EVENT_API_ERRORS[code as EventApiErrorCode], code);
      });
    });

    it('POST /event: 400 bad_batch_shape, naming events or sent_at_ms', async () => {
      const withoutEvents = await send('/event', signed({ events: [], sent_at_ms: Date.now() }));
      const withoutSentAt = await send('/event', signed({ events: [validEvent()] }));
      expectDocumented(withoutEvents, 400, 'bad_batch_shape');
      expectDocumented(withoutSentAt, 400, 'bad_batch_shape');
      expect([JSON.parse(withoutEvents.text).field, JSON.parse(withoutSentAt.text).field]).toEqual(['events', 'sent_at_ms']);
    });

    it('POST /event: 200 with the field at fault on each rejected result', async () => {
      // Stamped in seconds: every event's corrected time is out of range, and the hint says why.
      const answer = await send(
        '/event',
        signed({ events: [validEvent(), validEvent({ platform: 'web' })], sent_at_ms: Math.floor(Date.now() / 1000) }),
      );
      expectDocumented(answer, 200);
      expect(JSON.parse(answer.text).results.map((result: { field?: string }) => result.field)).toEqual(['sent_at_ms', 'sent_at_ms']);
      const mixed = await send('/event', signed(batchOf([validEvent(), validEvent({ platform: 'web' }), 'not an event'])));
      expectDocumented(mixed, 200);
      expect(JSON.parse(mixed.text).results.map((result: { field?: string }) => result.field ?? null)).toEqual([null, 'platform', null]);
    });

    it('POST /event: 429 cap_exceeded', async () => {
      const capped = await createTenant({ plan: 'free', monthlyCap: 0 });
      expectDocumented(await send('/event', signed(batchOf([validEvent()]), capped)), 429, 'cap_exceeded');
    });

    it('POST /privacy/delete: 400 bad_install_uuid, and bad_json for JSON that is not an object', async () => {
      expectDocumented(await send('/privacy/delete', signed({ install_uuid: 'not-a-uuid' })), 400, 'bad_install_uuid');
      expectDocumented(await send('/privacy/delete', signed([randomUUID()])), 400, 'bad_json');
    });
  });

  describe('with the object store down', () => {
    beforeAll(() => stack.emulators.stopS3());
    afterAll(() => stack.emulators.startS3());

    it('POST /event: 503 audit_write_failed', async () => {
      expectDocumented(await send('/event', signed(batchOf([validEvent()]))), 503, 'audit_write_failed');
    });

    it('GET /health: 503 naming the object store', async () => {
      const answer = await call('GET', '/health');
      expectDocumented(answer, 503);
      expect(JSON.parse(answer.text).bindings.object_store).not.toBe('ok');
    });
  });

  describe('tracking links and health', () => {
    let linkId: string;
    beforeAll(async () => {
      ({ link_id: linkId } = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'acme_ads' }));
    });
    const click = (id: string, ip: string) =>
      call('GET', `/l/${id}?click_id=abc123&sub1=creative_a`, { headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip } });

    it('GET /l/{link_id}: 302 to the store, then 429 rate_limited with Retry-After for the same /24', async () => {
      expectDocumented(await click(linkId, '198.51.100.7'), 302);
      expectDocumented(await click(linkId, '198.51.100.8'), 429, 'rate_limited');
    });

    it('GET /l/{link_id}: 404 unknown_link', async () => {
      expectDocumented(await click('no-such-link', '203.0.113.7'), 404, 'unknown_link');
    });

    it('GET /health: 200 with every binding ok', async () => {
      expectDocumented(await call('GET', '/health'), 200);
    });

    it.each(['/.well-known/apple-app-site-association', '/.well-known/assetlinks.json'])(
      'GET %s on a host that is no link domain: 404 not_found',
      async (path) => {
        expectDocumented(await call('GET', path), 404, 'not_found');
      },
    );

    it.each(['GET', 'POST'])('%s on a path no route names: 404 not_found', async (method) => {
      expectDocumented(await call(method, '/no/such/path'), 404, 'not_found');
    });
  });

  describe('the Reporting API', () => {
    let reader: Tenant;
    const bearer = (key = reader.serverKey) => ({ authorization: `Bearer ${key}` });
    const report = (name: string, query = '', headers: Record<string, string> = bearer()) =>
      call('GET', `${REPORTS_PREFIX}/${name}${query}`, { headers });

    beforeAll(async () => {
      // An install and a purchase, aggregated, so that every report has a row to check.
      reader = await createTenant({ plan: 'paid' });
      const client = new EventClient({ ...credentialsOf(reader), baseUrl: stack.baseUrl });
      const install = randomUUID();
      await client.sendEvents([
        validEvent({ event_name: 'install', install_uuid: install, revenue_usd: undefined }),
        validEvent({ event_name: 'purchase', install_uuid: install, revenue_usd: 4.99 }),
      ]);
      await stack.pollers.drain();
    });

    it.each([...REPORT_NAMES])('GET %s: 200 with rows and meta, then 304 for its ETag', async (name) => {
      const answer = await report(name);
      expectDocumented(answer, 200);
      expect(JSON.parse(answer.text).rows.length).toBeGreaterThan(0);
      const etag = answer.headers.get('etag') ?? '';
      expectDocumented(await report(name, '', { ...bearer(), 'if-none-match': etag }), 304);
    });

    const now = Date.now();
    it.each([
      ['invalid_since_until', '?since_ms=yesterday'],
      ['since_ms_must_be_less_than_until_ms', `?since_ms=${now}&until_ms=${now - 1}`],
      ['window_too_large', `?since_ms=${now - 366 * DAY_MS}&until_ms=${now}`],
      ['invalid_limit', '?limit=0'],
      ['invalid_offset', '?offset=-1'],
    ])('400 %s', async (code, query) => {
      expectDocumented(await report('attribution', query), 400, code);
    });

    it('401 missing_bearer_token and invalid_or_revoked_key', async () => {
      expectDocumented(await report('revenue', '', {}), 401, 'missing_bearer_token');
      expectDocumented(await report('revenue', '', bearer(`srv_${'0'.repeat(48)}`)), 401, 'invalid_or_revoked_key');
    });

    it.each([
      ['GET', `${REPORTS_PREFIX}/retention`],
      ['POST', `${REPORTS_PREFIX}/retention`],
      ['GET', REPORTS_PREFIX],
    ])('%s %s: 404 unknown_report', async (method, path) => {
      expectDocumented(await call(method, path), 404, 'unknown_report');
    });

    it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('%s on a report: 405 method_not_allowed with Allow: GET', async (method) => {
      expectDocumented(await call(method, `${REPORTS_PREFIX}/cohorts`, { headers: bearer() }), 405, 'method_not_allowed');
    });

    it('503 store_unavailable while the store fails', async () => {
      const fault = countingWrites(dynamoClient(), 0);
      try {
        expectDocumented(await report('events'), 503, 'store_unavailable');
      } finally {
        fault.stop();
      }
    });
  });
});
