// The conformance kit (issue 39, item 6) against real SDKs and deliberately broken ones: the core
// of packages/sdk-core on Node passes every scenario; the core made to keep sent_at_ms across
// retries fails P-STAMP-1 and nothing else, the core that sends 10 events uncompressed fails
// P-GZIP-1 and nothing else, each report naming the rule and the offending request.

import { gunzipSync, gzipSync } from 'node:zlib';
import { sdkCoreHarness } from '../../conformance/harnesses/sdk-core-node';
import { formatReport, runConformance } from '../../conformance/kit';
import { scenariosNamed } from '../../conformance/scenarios';
import { signature } from '../../packages/sdk-core/src';
import { type LocalStack, startLocalStack } from '../support/local-stack';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

/** Each scenario's failed rules, by scenario name (skipped scenarios: 'skipped'). */
function failures(report: Awaited<ReturnType<typeof runConformance>>): Record<string, string[] | 'skipped'> {
  return Object.fromEntries(
    report.scenarios.map((result) => [
      result.scenario,
      result.status === 'skipped'
        ? 'skipped'
        : [...(result.note ? [result.note] : []), ...result.rules.filter((r) => !r.passed).map((r) => r.rule)],
    ]),
  );
}

describe('the conformance kit', () => {
  it('passes packages/sdk-core on Node in every scenario, each rule reported by id', async () => {
    const report = await runConformance(sdkCoreHarness(), { runtime: stack });
    expect({ failures: failures(report), text: report.passed ? '' : formatReport(report) }).toEqual({
      failures: { baseline: [], unavailable: [], throttled: [], restarts: [], consent: [], 'expired-secret': [] },
      text: '',
    });
    const text = formatReport(report);
    expect(text).toMatch(/PASS P-STAMP-1 /);
    expect(text).toMatch(/PASS P-ONCE-1 /);
    expect(text).toMatch(/PASS P-AUTH-1 /);
  }, 120_000);

  it('fails a core that keeps sent_at_ms across retries on P-STAMP-1 alone, naming the retried request', async () => {
    const firstStamp = new Map<string, number>();
    const broken = sdkCoreHarness({
      name: 'sdk-core keeping sent_at_ms',
      network: (network, ctx) => async (request) => {
        if (!request.url.endsWith('/event') || !request.body) return network(request);
        const gzipped = request.headers['content-encoding'] === 'gzip';
        const payload = JSON.parse((gzipped ? gunzipSync(request.body) : Buffer.from(request.body)).toString()) as {
          events: { event_id: string }[];
          sent_at_ms: number;
        };
        const key = payload.events[0]!.event_id;
        payload.sent_at_ms = firstStamp.get(key) ?? payload.sent_at_ms;
        firstStamp.set(key, payload.sent_at_ms);
        const json = Buffer.from(JSON.stringify(payload));
        const body = gzipped ? gzipSync(json) : json;
        return network({ ...request, body, headers: { ...request.headers, 'x-service-signature': signature(ctx.signingSecret, body) } });
      },
    });
    const report = await runConformance(broken, { runtime: stack, scenarios: scenariosNamed('unavailable') });
    expect(failures(report)).toEqual({ unavailable: ['P-STAMP-1'] });
    expect(formatReport(report)).toMatch(
      /FAIL P-STAMP-1 sent_at_ms is stamped anew for each attempt\n\s+retry of #\d+ with sent_at_ms \d+, not after its \d+: #\d+ POST \/event \(\d+ events, sent_at_ms \d+\)/,
    );
  }, 60_000);

  it('fails a core that sends 10 events uncompressed on P-GZIP-1 alone', async () => {
    const report = await runConformance(sdkCoreHarness({ name: 'sdk-core without gzip', config: { gzipFrom: 11 } }), {
      runtime: stack,
      scenarios: scenariosNamed('baseline'),
    });
    expect(failures(report)).toEqual({ baseline: ['P-GZIP-1'] });
    expect(formatReport(report)).toMatch(/FAIL P-GZIP-1 .*\n\s+10 events sent without Content-Encoding: gzip: #\d+ POST \/event/);
  }, 60_000);
});
