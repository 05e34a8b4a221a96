// Currencies end to end on the local runtime (real dynalite, the handlers under their grants):
// rates set with `admin fx set`, a purchase in EUR sent to POST /event counted in dollars by the
// revenue report after aggregation, the audit line keeping the amount and currency, an unknown
// currency rejected bad_currency beside accepted events; and the scheduled fx-fetch reading a
// stub of the ECB's daily file on 127.0.0.1 (the runtime never reaches the internet).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdmin } from '../../bin/admin';
import { EventClient } from '../../client/event-client';
import { AuditReader } from '../../functions/adapters/audit-reader';
import { FxStore } from '../../functions/adapters/fx-store';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack } from '../support/local-stack';

const DAY = 86_400_000;
let stack: LocalStack;
let ecb: Server;
let ecbRequests = 0;
/** What the stub answers: the ECB's file, the outage of a 503, or a document that is not the ECB's. */
let ecbAnswer: 'daily' | 'down' | 'garbage' = 'daily';
let dir: string;

const ECB_DAILY = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
\t\t<Cube time='2025-03-07'>
\t\t\t<Cube currency='USD' rate='1.0830'/>
\t\t\t<Cube currency='JPY' rate='160.25'/>
\t\t\t<Cube currency='GBP' rate='0.83960'/>
\t\t\t<Cube currency='CHF' rate='0.9522'/>
\t\t</Cube>
\t</Cube>
</gesmes:Envelope>`;

beforeAll(async () => {
  ecb = createServer((_request, response) => {
    ecbRequests++;
    if (ecbAnswer === 'down') response.writeHead(503).end('maintenance');
    else response.writeHead(200, { 'content-type': 'text/xml' }).end(ecbAnswer === 'daily' ? ECB_DAILY : '<html>moved</html>');
  });
  await new Promise<void>((resolve) => ecb.listen(0, '127.0.0.1', resolve));
  const { port } = ecb.address() as AddressInfo;
  stack = await startLocalStack({ internet: { FX_SOURCE_URL: `http://127.0.0.1:${port}/stats/eurofxref/eurofxref-daily.xml` } });
  dir = mkdtempSync(join(tmpdir(), 'fx-'));
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stack?.stop();
  await new Promise((resolve) => ecb?.close(resolve));
});

describe('revenue in a currency', () => {
  it('is counted in dollars at the rate set with admin fx set, and kept as sent in the audit line', async () => {
    const tenant = await createTenant();
    const client = new EventClient({
      baseUrl: stack.baseUrl,
      companyKey: tenant.company.company_key,
      appKey: tenant.app.app_key,
      signingSecret: tenant.app.signing_secret,
    });
    const now = Date.now();
    const installAt = now - 2 * DAY;
    const purchaseAt = now - DAY;
    const purchaseDay = new Date(purchaseAt).toISOString().slice(0, 10);
    // The rate is of the day before the purchase: the latest earlier rate within 7 days is used.
    const rateDay = new Date(purchaseAt - DAY).toISOString().slice(0, 10);
    const file = join(dir, 'rates.json');
    writeFileSync(file, JSON.stringify({ EUR: 1.08, JPY: 0.0066 }));
    expect(await runAdmin(['fx', 'set', '--date', rateDay, '--file', file])).toEqual({ day: rateDay, rates: { EUR: 1.08, JPY: 0.0066 } });
    expect(await runAdmin(['fx', 'show', '--date', rateDay])).toMatchObject({
      day: rateDay,
      rates: { EUR: 1.08, JPY: 0.0066 },
      source: 'admin',
    });

    const uuid = '0000000f-1111-4222-8333-444444444444';
    const answer = await client.sendEvents([
      { event_id: 'i1', event_name: 'install', install_uuid: uuid, ts_ms: installAt, platform: 'ios' },
      { event_id: 'p1', event_name: 'purchase', install_uuid: uuid, ts_ms: purchaseAt, revenue: 10, currency: 'EUR' },
      { event_id: 'p2', event_name: 'purchase', install_uuid: uuid, ts_ms: purchaseAt + 1000, revenue: 10, currency: 'XYZ' },
      { event_id: 'p3', event_name: 'purchase', install_uuid: uuid, ts_ms: purchaseAt + 2000, revenue_usd: 1 },
    ]);
    expect(answer.accepted).toBe(3);
    expect(answer.results.map(({ status, reason, field }) => [status, reason, field])).toEqual([
      ['accepted', undefined, undefined],
      ['accepted', undefined, undefined],
      ['rejected', 'bad_currency', 'currency'],
      ['accepted', undefined, undefined],
    ]);

    const lines = await new AuditReader(resourceName.bucket()).lines(answer.audit_key);
    expect(lines[1]).toMatchObject({
      status: 'accepted',
      event: { event_id: 'p1', revenue: 10, currency: 'EUR', revenue_usd: 10.8 },
      fx: { currency: 'EUR', amount: 10, rate: 1.08, rate_day: rateDay },
    });
    expect(lines[2]).toMatchObject({ status: 'rejected', reason: 'bad_currency', event: { revenue: 10, currency: 'XYZ' } });
    expect(lines[2]?.fx).toBeUndefined();

    await stack.pollers.drain();
    const response = await fetch(`${stack.baseUrl}/api/v1/reports/revenue`, { headers: { authorization: `Bearer ${tenant.serverKey}` } });
    const { rows } = (await response.json()) as { rows: unknown[] };
    expect(rows).toEqual([{ day: purchaseDay, partner: 'organic', purchases: 2, revenue_usd: 11.8, arppu_usd: 11.8 }]);
  });
});

describe('the daily fx-fetch', () => {
  it("stores the ECB's rates per euro as US dollars per unit, read from the configured source", async () => {
    const before = ecbRequests;
    const result = await stack.scheduler.run('fx-fetch');
    expect(ecbRequests).toBe(before + 1);
    expect(result).toMatchObject({ days: ['2025-03-07'] });
    const stored = await new FxStore(resourceName.table('fx_rates')).day('2025-03-07');
    expect(stored?.rates).toEqual({
      EUR: 1.083,
      USD: 1,
      JPY: Number((1.083 / 160.25).toPrecision(10)),
      GBP: Number((1.083 / 0.8396).toPrecision(10)),
      CHF: Number((1.083 / 0.9522).toPrecision(10)),
    });
    expect(stored?.source).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    // What ingest converts with: 1,000 JPY on that day.
    expect(1000 * (stored?.rates.JPY ?? 0)).toBeCloseTo(6.758190328, 6);
  });

  it('fails the run (the Errors alarm) and stores nothing when the source is down or answers something else', async () => {
    const store = new FxStore(resourceName.table('fx_rates'));
    await store.putRates('2025-03-07', { EUR: 1.5 }, 'admin');
    try {
      for (const answer of ['down', 'garbage'] as const) {
        ecbAnswer = answer;
        const before = ecbRequests;
        await expect(stack.scheduler.run('fx-fetch')).rejects.toThrow();
        expect(ecbRequests).toBe(before + 1);
        expect((await store.day('2025-03-07'))?.rates).toEqual({ EUR: 1.5 });
      }
    } finally {
      ecbAnswer = 'daily';
    }
  });
});
