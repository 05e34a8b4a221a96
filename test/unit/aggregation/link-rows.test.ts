import fc from 'fast-check';
import { differences, rowOf } from '../../../functions/domain/aggregation/rebuild';
import { click, failingAfter, LEASE_MS, T0, world } from './world';

/**
 * The link family's installs (docs/tracking-links.md, "Link stats"), held to an oracle that knows
 * nothing of claims or lanes: each install event whose click is within the lookback counts once on
 * its link and local day, reinstalls and fraud-flagged ones included, whatever deliveries die or
 * come again.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const localDay = (ms: number, zone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

interface Step {
  readonly install: number;
  readonly atHours: number;
  /** The link of the click the install names, and how long before it the click was made (past 7 days: outside the lookback, organic). */
  readonly click?: { readonly link: string; readonly agoSeconds: number };
}

const stepArb: fc.Arbitrary<Step> = fc.record(
  {
    install: fc.integer({ min: 1, max: 3 }),
    atHours: fc.integer({ min: 0, max: 60 }),
    click: fc.record({
      link: fc.constantFrom('lnk_a', 'lnk_b', 'lnk_c'),
      agoSeconds: fc.oneof(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 10, max: 6 * 86_400 }), fc.constant(8 * 86_400)),
    }),
  },
  { requiredKeys: ['install', 'atHours'] },
);

function oracle(steps: readonly Step[], zone: string): Record<string, { installs: number }> {
  const rows: Record<string, { installs: number }> = {};
  for (const step of steps) {
    if (!step.click || step.click.agoSeconds > 7 * 86_400) continue;
    const key = `${localDay(T0 + step.atHours * HOUR, zone)}|${step.click.link}`;
    rows[key] = { installs: (rows[key]?.installs ?? 0) + 1 };
  }
  return rows;
}

function upload(w: ReturnType<typeof world>, step: Step, s: number): string {
  const ts = T0 + step.atHours * HOUR;
  if (step.click) {
    w.clicks.set(`c-${s}`, click({ click_id: `c-${s}`, ts_ms: ts - step.click.agoSeconds * 1000, link_id: step.click.link }));
  }
  return w.upload([
    {
      event_id: `i-${s}`,
      event_name: 'install',
      install_uuid: uuid(step.install),
      ts_ms: ts,
      platform: 'ios',
      ...(step.click ? { attribution: { click_id: `c-${s}` } } : {}),
    },
  ]);
}

describe('link rows', () => {
  it('count each attributed install event once on its link and day, whatever deliveries die and come again', async () => {
    const faultArb = fc.option(fc.record({ afterWrites: fc.integer({ min: 0, max: 30 }), redeliverTwice: fc.boolean() }), {
      nil: undefined,
      freq: 2,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ step: stepArb, fault: faultArb }), { minLength: 1, maxLength: 10 }),
        fc.constantFrom('UTC', 'America/Los_Angeles', 'Asia/Tokyo'),
        async (plan, zone) => {
          const w = world({ timeZone: zone });
          w.clock.now = T0 + 3 * DAY;
          const bodies = plan.map(({ step }, s) => upload(w, step, s));
          for (const [s, { fault }] of plan.entries()) {
            const body = bodies[s] as string;
            if (fault) await w.deliver([body], failingAfter(w.ports, fault.afterWrites).ports);
            // The function died (or the message comes twice): its lease runs out and SQS delivers again.
            for (let round = 0; round < (fault?.redeliverTwice ? 2 : 1) + 2; round++) {
              w.clock.now += LEASE_MS + 1;
              const [outcome] = await w.deliver([body]);
              if (round > 0 && outcome?.kind === 'already_counted') break;
            }
          }
          expect(w.table().link).toEqual(
            oracle(
              plan.map(({ step }) => step),
              zone,
            ),
          );
        },
      ),
      { numRuns: 120 },
    );
  });

  it("are rebuilt with the live rows' clicks, which no audit object holds", () => {
    const live = [
      rowOf('link', '2026-06-01', ['lnk_a'], { clicks: 5, installs: 2 }),
      rowOf('link', '2026-06-01', ['lnk_b'], { clicks: 3 }),
    ];
    expect(differences(live, [rowOf('link', '2026-06-01', ['lnk_a'], { installs: 2 })])).toEqual([]);
    expect(differences(live, [rowOf('link', '2026-06-01', ['lnk_a'], { installs: 1 })])).toEqual([
      {
        family: 'link',
        day: '2026-06-01',
        group: { link_id: 'lnk_a' },
        live: { clicks: 5, installs: 2, reengagements: 0 },
        rebuilt: { clicks: 5, installs: 1, reengagements: 0 },
      },
    ]);
  });
});
