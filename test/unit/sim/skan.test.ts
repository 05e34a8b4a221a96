import fc from 'fast-check';
import { verifyAdAttributionKit } from '../../../functions/domain/skan/adattributionkit';
import { type PostbackKeys, testKeysOf } from '../../../functions/domain/skan/postback-keys';
import { validateSkanSchema } from '../../../functions/domain/skan/schema';
import { SKADNETWORK_VERSIONS, verifySkadnetwork } from '../../../functions/domain/skan/skadnetwork';
import {
  ADATTRIBUTIONKIT_TEST_KID,
  adAttributionKitTestPrivateKey,
  skadnetworkTestPrivateKey,
  skanTestKeysValue,
} from '../../../local/skan-test-key';
import { Random } from '../../../sim/random';
import {
  compareSkan,
  type Delivery,
  estimateCents,
  expectedSkan,
  type PlannedPostback,
  planSkan,
  postbackBody,
  type SchemaFile,
  type SentPostback,
} from '../../../sim/skan';

// The keys the local runtime trusts (local/skan-test-key.ts), read as skan-postback reads them.
const KEY = {
  skadnetwork: skadnetworkTestPrivateKey(),
  adAttributionKit: adAttributionKitTestPrivateKey(),
  kid: ADATTRIBUTIONKIT_TEST_KID,
};
const KEYS: PostbackKeys = testKeysOf(skanTestKeysValue());
const OPTIONS = { appStoreId: '700000000101', unknownAppStoreId: '800000000001', extra: 20, runId: '0a1b2c3d' };
const plan = planSkan(new Random('skan-test'), OPTIONS);
const T = Date.UTC(2026, 10, 21, 15, 0);
const NY = 'America/New_York';

const verify = (body: Record<string, unknown>) =>
  'jws-string' in body ? verifyAdAttributionKit(body, KEYS.adAttributionKit) : verifySkadnetwork(body, KEYS);

describe("the simulator's SKAN plan", () => {
  it('is the same for the same seed, and another for another seed; its transaction ids are the run’s own', () => {
    expect(planSkan(new Random('skan-test'), OPTIONS)).toEqual(plan);
    for (const { postback } of plan.deliveries)
      expect(postback.id.toLowerCase()).toMatch(/^0a1b2c3d-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const again = planSkan(new Random('skan-test'), { ...OPTIONS, runId: 'ffff0000' });
    expect(again.deliveries.map((d) => d.postback.id.slice(8))).toEqual(plan.deliveries.map((d) => d.postback.id.slice(8)));
    expect(again.deliveries.some((d) => plan.deliveries.some((e) => e.postback.id === d.postback.id))).toBe(false);
    expect(planSkan(new Random('other'), OPTIONS).deliveries[0]?.postback.id).not.toBe(plan.deliveries[0]?.postback.id);
  });

  it('holds both kinds in windows 0, 1 and 2 with a fine, a coarse and no value, duplicates, tampered ones and an unknown app', () => {
    const shapes = new Set(
      plan.deliveries.map(
        ({ postback: p }) => `${p.kind} ${p.window} ${p.value === undefined ? 'none' : 'fine' in p.value ? 'fine' : 'coarse'}`,
      ),
    );
    for (const kind of ['skadnetwork', 'adattributionkit'])
      for (const shape of ['0 fine', '0 coarse', '0 none', '1 coarse', '1 none', '2 coarse', '2 none'])
        expect(shapes).toContain(`${kind} ${shape}`);
    expect(shapes).not.toContain('skadnetwork 1 fine');
    const ids = plan.deliveries.map((d) => d.postback.id);
    expect(new Set(ids).size).toBeLessThan(ids.length);
    expect(plan.deliveries.filter((d) => d.tampered).length).toBeGreaterThanOrEqual(3);
    expect(plan.deliveries.some((d) => d.replayValue !== undefined)).toBe(true);
    expect(
      plan.deliveries
        .filter((d) => d.postback.unknownApp)
        .map((d) => d.postback.kind)
        .sort(),
    ).toEqual(['adattributionkit', 'skadnetwork']);
    expect(plan.deliveries.some((d) => d.postback.conversion === 're-engagement')).toBe(true);
    expect(plan.deliveries.some((d) => plan.unmapped.includes(d.postback.adNetworkId))).toBe(true);
  });

  it("gives schemas the service validates, whose ranges' middles are whole cents", () => {
    for (const schema of plan.schemas) {
      expect(validateSkanSchema(schema)).toMatchObject({ ok: true });
      for (const {
        revenue_usd: [min, max],
      } of [...schema.fine, ...schema.coarse]) {
        expect(Number.isInteger(Math.round(min * 100) + Math.round(max * 100))).toBe(true);
        expect((Math.round(min * 100) + Math.round(max * 100)) % 2).toBe(0);
      }
    }
    expect(plan.schemas[1]).not.toEqual(plan.schemas[0]);
  });
});

describe("the simulator's signed postbacks", () => {
  it("verify under the service's own verifiers with the keys the local runtime trusts, SKAdNetwork 4.0 in the order skadnetwork.ts has it", () => {
    const order = SKADNETWORK_VERSIONS['4.0']?.fields.flatMap((f) => (typeof f === 'string' ? [f] : f.firstPresentOf)) ?? [];
    for (const delivery of plan.deliveries.filter((d) => !d.tampered)) {
      const body = postbackBody(delivery, KEY);
      const check = verify(body);
      expect({ id: delivery.postback.id, verification: check.verification }).toMatchObject({ verification: { verified: true } });
      if (delivery.postback.kind === 'skadnetwork') {
        expect(Object.keys(check.signed ?? {})).toEqual(order.filter((name) => name in body));
        expect(body['app-id']).toBe(Number(delivery.postback.appId));
      } else expect(check.signed?.['advertised-item-identifier']).toBe(Number(delivery.postback.appId));
    }
  });

  it('fail as bad_signature when tampered, and name the dimensions the plan says', () => {
    for (const delivery of plan.deliveries.filter((d) => d.tampered)) {
      const check = verify(postbackBody(delivery, KEY));
      expect(check.verification).toMatchObject({ verified: false, reason: 'bad_signature' });
      expect(check.signed?.['source-identifier']).toBe(delivery.postback.sourceIdentifier);
    }
  });

  it('carry the conversion value unsigned: a replay with another value still verifies', () => {
    const replay = plan.deliveries.find((d) => d.replayValue !== undefined);
    if (!replay) throw new Error('the plan has no replay');
    const body = postbackBody(replay, KEY);
    expect(verify(body).verification).toMatchObject({ verified: true });
    expect(body['coarse-conversion-value']).toBe(replay.replayValue && 'coarse' in replay.replayValue ? replay.replayValue.coarse : 'none');
  });
});

const SCHEMA: SchemaFile = {
  fine: [
    { value: 10, revenue_usd: [1, 3] },
    { value: 63, revenue_usd: [10, 20.5] },
  ],
  coarse: [
    { window: 0, value: 'high', revenue_usd: [5, 15] },
    { window: 1, value: 'high', revenue_usd: [2, 4] },
  ],
};
const SCHEMA_2: SchemaFile = { fine: [{ value: 10, revenue_usd: [100, 300] }], coarse: [] };

describe("the simulator's estimate of a postback's revenue", () => {
  it("is the middle of the value's range: fine in window 0, else the coarse value of the window, else 0", () => {
    expect(estimateCents(SCHEMA, 0, { fine: 63 })).toBe(1525);
    expect(estimateCents(SCHEMA, 0, { fine: 10 })).toBe(200);
    expect(estimateCents(SCHEMA, 0, { fine: 11 })).toBe(0);
    expect(estimateCents(SCHEMA, 1, { fine: 10 })).toBe(0);
    expect(estimateCents(SCHEMA, 0, { coarse: 'high' })).toBe(1000);
    expect(estimateCents(SCHEMA, 1, { coarse: 'high' })).toBe(300);
    expect(estimateCents(SCHEMA, 2, { coarse: 'high' })).toBe(0);
    expect(estimateCents(SCHEMA, 0, undefined)).toBe(0);
    expect(estimateCents(undefined, 0, { fine: 63 })).toBe(0);
  });
});

const postback = (id: string, over: Partial<PlannedPostback> = {}): PlannedPostback => ({
  kind: 'skadnetwork',
  id,
  appId: '700000000101',
  unknownApp: false,
  adNetworkId: 'net1.skadnetwork',
  sourceIdentifier: '5239',
  window: 0,
  fidelity: 1,
  conversion: 'download',
  value: { fine: 10 },
  ...over,
});
const sent = (delivery: Partial<Delivery> & { postback: PlannedPostback }, schemaVersion = 1, status = 200, at = T): SentPostback => ({
  delivery: { tampered: false, phase: 0, ...delivery },
  schemaVersion,
  status,
  sentMs: at,
  answeredMs: at + 30,
});
const partnerOf = (id: string) => (id === 'net1.skadnetwork' ? 'meta' : id);
const SCHEMAS = new Map([
  [1, SCHEMA],
  [2, SCHEMA_2],
]);

describe("the simulator's SKAN oracle", () => {
  it('counts a transaction id once whatever its copies carry, through the schema active when it first arrived', () => {
    const a = postback('a');
    const { rows } = expectedSkan(
      [
        sent({ postback: a }),
        sent({ postback: a }, 2),
        sent({ postback: a, replayValue: { fine: 63 } }, 2),
        sent({ postback: a, tampered: true }, 2),
        sent({ postback: postback('b') }, 2),
      ],
      SCHEMAS,
      partnerOf,
      NY,
    );
    expect(rows).toEqual([
      {
        day: '2026-11-21',
        partner: 'meta',
        source_identifier: '5239',
        postback_sequence_index: 0,
        fidelity_type: 1,
        conversion_type: 'download',
        postbacks: 2,
        installs: 2,
        redownloads: 0,
        with_fine_value: 2,
        with_coarse_value: 0,
        without_value: 0,
        estimated_revenue_usd: 202,
      },
    ]);
  });

  it('counts a tampered postback only in invalid, once, in no row; a verified one that comes after it counts too; unknown apps and refused deliveries nowhere', () => {
    const forged = postback('f', { sourceIdentifier: '77', window: 1, value: undefined, conversion: 'redownload' });
    const { rows, invalid } = expectedSkan(
      [
        sent({ postback: forged, tampered: true }),
        sent({ postback: forged, tampered: true }),
        sent({ postback: forged }),
        sent({ postback: postback('u', { unknownApp: true, appId: '1' }) }),
        sent({ postback: postback('x') }, 1, 503),
      ],
      SCHEMAS,
      partnerOf,
      'UTC',
    );
    expect(rows).toEqual([
      expect.objectContaining({
        source_identifier: '77',
        postback_sequence_index: 1,
        postbacks: 1,
        installs: 0,
        redownloads: 1,
        without_value: 1,
      }),
    ]);
    expect(invalid).toBe(1);
    expect(rows[0]).not.toHaveProperty('invalid');
  });

  it('puts a postback on the local day it was received, and says when that day was a matter of milliseconds', () => {
    const midnight = Date.UTC(2026, 10, 22, 5, 0); // New York's midnight
    const { rows, ambiguous } = expectedSkan(
      [
        sent({ postback: postback('before') }, 1, 200, midnight - 1_000),
        sent({ postback: postback('across') }, 1, 200, midnight - 10),
        sent({ postback: postback('after') }, 1, 200, midnight + 10),
      ],
      SCHEMAS,
      partnerOf,
      NY,
    );
    expect(ambiguous).toBe(1);
    expect(rows.map((r) => [r.day, r.postbacks]).sort()).toEqual([
      ['2026-11-21', 1],
      ['2026-11-22', 2],
    ]);
  });

  it('adds up to a plain count of ids: verified postbacks once per id, invalid ones when a forgery took the id first', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.integer({ min: 0, max: 6 }), tampered: fc.boolean(), ok: fc.boolean(), unknown: fc.boolean() }), {
          maxLength: 40,
        }),
        (draws) => {
          const log = draws.map((d) =>
            sent({ postback: postback(`t${d.id}`, d.unknown ? { unknownApp: true } : {}), tampered: d.tampered }, 1, d.ok ? 200 : 503),
          );
          const { rows, invalid } = expectedSkan(log, SCHEMAS, partnerOf, 'UTC');
          const sum = (c: string) => rows.reduce((n, r) => n + Number(r[c]), 0);
          const taken = draws.filter((d) => d.ok && !d.unknown);
          const verifiedIds = new Set(taken.filter((d) => !d.tampered).map((d) => d.id));
          const forgedFirst = new Set(
            [...new Set(taken.map((d) => d.id))].filter((id) => taken.find((d) => d.id === id)?.tampered === true),
          );
          expect(sum('postbacks')).toBe(verifiedIds.size);
          expect(invalid).toBe(forgedFirst.size);
          expect(sum('with_fine_value') + sum('with_coarse_value') + sum('without_value')).toBe(sum('postbacks'));
        },
      ),
    );
  });
});

describe("the simulator's SKAN comparison", () => {
  const row = {
    day: '2026-11-21',
    partner: 'meta',
    source_identifier: '52',
    postback_sequence_index: 0,
    fidelity_type: 1,
    conversion_type: 'download',
    postbacks: 1,
    estimated_revenue_usd: 12.5,
  };

  it('takes numbers and their text alike in the group columns, and dollars to the cent', () => {
    expect(compareSkan([row], [{ ...row, postback_sequence_index: '0', fidelity_type: '1', estimated_revenue_usd: 12.500000001 }])).toEqual(
      [],
    );
  });

  it('reports a cent off, a count off and a row missing', () => {
    expect(compareSkan([row], [{ ...row, estimated_revenue_usd: 12.49 }])).toMatchObject([{ column: 'estimated_revenue_usd' }]);
    expect(compareSkan([row], [{ ...row, postbacks: 2 }])).toMatchObject([{ column: 'postbacks', expected: 1, actual: 2 }]);
    expect(compareSkan([row], [])).toMatchObject([{ report: 'skan', row: '2026-11-21 meta 52 0 1 download' }]);
  });
});
