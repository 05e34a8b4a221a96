import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FunctionSpec, functions } from '../../lib/manifest';
import { logicalId, synthesizeService } from './synthesize';

/**
 * The numbers and routes README.md and docs/route-limits.md state about the deployed stack, held
 * to the synthesized template (and the manifest it is made from), so that a change to the stack
 * that leaves a doc behind fails here, naming the doc.
 */

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;
let resources: Resources;
let consoleApi: string;
beforeAll(() => {
  const service = synthesizeService();
  resources = service.template.toJSON().Resources as Resources;
  consoleApi = logicalId(service.stack.console.httpApi);
}, 240_000);

// The console's own HTTP API (lib/constructs/console-site.ts) has its own stage and limits, tested with it.
const ofConsoleApi = (resource: Resources[string]) => (resource.Properties?.ApiId as { Ref?: string } | undefined)?.Ref === consoleApi;
const ofType = (type: string) => Object.values(resources).filter((resource) => resource.Type === type && !ofConsoleApi(resource));
const NUMBER_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 };
const numberIn = (text: string, pattern: RegExp): number => {
  const found = pattern.exec(text)?.[1];
  if (found === undefined) throw new Error(`${pattern} is not in the text`);
  return NUMBER_WORDS[found] ?? Number(found.replace(/,/g, ''));
};

interface LimitRow {
  route: string;
  rateLimit: number;
  burstLimit: number;
}

/** The rows of the doc's `| Route | Requests/s | Burst |` table: the first backticked span, and the two numbers. */
function routeTable(doc: string): LimitRow[] {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => /^\| Route \| Requests\/s \| Burst \|/.test(line));
  if (start < 0) throw new Error('no route table');
  const rows: LimitRow[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [route, rate, burst] = line.split('|').slice(1, 4);
    rows.push({
      route: /`([^`]+)`/.exec(route ?? '')?.[1] ?? '',
      rateLimit: Number(rate?.trim().replace(/,/g, '')),
      burstLimit: Number(burst?.trim().replace(/,/g, '')),
    });
  }
  return rows;
}

/** Each route's throttle as the stage applies it: its own route setting, else the stage default. */
function templateLimits(): LimitRow[] {
  const [stage] = ofType('AWS::ApiGatewayV2::Stage');
  const props = stage?.Properties as {
    DefaultRouteSettings: { ThrottlingRateLimit: number; ThrottlingBurstLimit: number };
    RouteSettings?: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }>;
  };
  return ofType('AWS::ApiGatewayV2::Route').map((resource) => {
    const route = String(resource.Properties?.RouteKey);
    const setting = props.RouteSettings?.[route] ?? props.DefaultRouteSettings;
    return { route, rateLimit: setting.ThrottlingRateLimit, burstLimit: setting.ThrottlingBurstLimit };
  });
}

const byRoute = (rows: LimitRow[]) => [...rows].sort((a, b) => a.route.localeCompare(b.route));

describe('README.md and docs/route-limits.md against the template', () => {
  it("list every API route of the manifest, each with the template's rate and burst", () => {
    // A function URL's routes (GET /l/{link_id}, issue 41) are CloudFront's, not the API's: no API Gateway limit.
    const manifestRoutes = Object.values(functions as Record<string, FunctionSpec>)
      .filter((f) => !f.functionUrl)
      .flatMap((f) => f.routes ?? []);
    const template = byRoute(templateLimits());
    expect(template.map((row) => row.route).sort()).toEqual([...manifestRoutes].sort());
    expect(byRoute(routeTable(read('README.md')))).toEqual(template);
    expect(byRoute(routeTable(read('docs/route-limits.md')))).toEqual(template);
  });

  it("keeps the routes together within API Gateway's default account quota, as README says", () => {
    const readme = read('README.md');
    const quota = /default account quota \(([\d,]+)\/s, bursts of ([\d,]+)\)/.exec(readme);
    expect(quota).not.toBeNull();
    const limits = templateLimits();
    expect(limits.reduce((sum, row) => sum + row.rateLimit, 0)).toBeLessThanOrEqual(Number(quota?.[1]?.replace(/,/g, '')));
    expect(limits.reduce((sum, row) => sum + row.burstLimit, 0)).toBeLessThanOrEqual(Number(quota?.[2]?.replace(/,/g, '')));
  });

  it('says how many alarms, KMS keys, secrets and dashboards the stack costs at rest', () => {
    const readme = read('README.md').replace(/\s+/g, ' ');
    expect(numberIn(readme, /CloudWatch alarms \(([\d,]+) today/)).toBe(ofType('AWS::CloudWatch::Alarm').length);
    expect(numberIn(readme, /(\w+) customer-managed KMS keys/)).toBe(ofType('AWS::KMS::Key').length);
    expect(numberIn(readme, /(\w+) Secrets Manager secret/)).toBe(ofType('AWS::SecretsManager::Secret').length);
    expect(readme).toMatch(/\band dashboard \(\$3\)/);
    expect(ofType('AWS::CloudWatch::Dashboard')).toHaveLength(1);
  });
});
