// What `npm start` prints under "Try it:", pasted into a shell as a newcomer would: every curl of
// the banner (local/seed.ts) and the README's TypeScript example (client/example.ts), run
// literally against a seeded local stack.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { demoSections } from '../../local/seed';
import { type LocalStack, startLocalStack } from '../support/local-stack';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ seed: true });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** Runs pasted lines in bash from the repository, as the banner says, and gives each answer's status line. */
async function paste(lines: readonly string[]): Promise<{ statuses: number[]; stdout: string }> {
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], { cwd: root, env: process.env });
  return { statuses: [...stdout.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((match) => Number(match[1])), stdout };
}

describe("npm start's banner", () => {
  it('gives a curl for every endpoint that gets its documented answer when pasted', async () => {
    const demo = stack.demo;
    if (!demo) throw new Error('the stack seeded no demo');
    const answers: Record<string, number[]> = {};
    for (const section of demoSections(demo, stack.baseUrl)) {
      const { statuses, stdout } = await paste(section.lines);
      answers[section.routes.join(', ')] = statuses;
      if (section.routes.includes('GET /sdk/v1/skan-schema')) expect(stdout).toContain('"error":"no_schema"');
    }
    expect(answers).toEqual({
      'GET /health': [200],
      'OPTIONS /{proxy+}': [204],
      'POST /event': [200],
      'GET /l/{link_id}': [302],
      'GET /.well-known/apple-app-site-association, GET /.well-known/assetlinks.json': [200, 200],
      'POST /privacy/delete': [202],
      'GET /api/v1/reports/attribution, GET /api/v1/reports/revenue, GET /api/v1/reports/cohorts, GET /api/v1/reports/events, GET /api/v1/reports/performance, GET /api/v1/reports/skan':
        [200, 200, 200, 200, 200, 200],
      'GET /api/v1/stream/events': [200],
      'POST /api/v1/cost': [200],
      'POST /api/v1/ad-revenue': [200],
      // The app has no schema until `admin skan schema set`: the documented 404, which the banner's comment says.
      'GET /sdk/v1/skan-schema': [404],
      'POST /sdk/v1/attribution, GET /sdk/v1/attribution': [200, 200],
      'POST /skan-postback, POST /.well-known/skadnetwork/report-attribution, POST /.well-known/appattribution/report-attribution': [
        200, 200, 200,
      ],
    });
  }, 60_000);

  it("runs the README's TypeScript example as written", async () => {
    const { stdout } = await run('npx', ['tsx', 'client/example.ts'], { cwd: root, env: { ...process.env, DATA_DIR: stack.dataDir } });
    expect(JSON.parse(stdout)).toMatchObject({ accepted: 1, rejected: 0, results: [{ event_id: 'ts-1', status: 'accepted' }] });
  }, 60_000);
});
