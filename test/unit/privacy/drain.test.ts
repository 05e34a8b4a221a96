import type { AdServicesAnswer, AdServicesAnswers } from '../../../functions/domain/adservices/answers';
import { withAnswers } from '../../../functions/domain/adservices/token';
import { tokenOf } from '../../../functions/domain/aggregation/lease';
import { AuditObjectError } from '../../../functions/domain/audit/decode';
import type { AuditLine } from '../../../functions/domain/audit/types';
import {
  type DeletionCounts,
  type DrainPorts,
  drainPrivacyRequests,
  eraseInstall,
  MAX_ROWS_PER_TABLE,
  type PostbackItemKey,
} from '../../../functions/domain/privacy/drain';
import { installKey, type PrivacyMessage } from '../../../functions/domain/privacy/privacy';
import { ERASED_LINE } from '../../../functions/domain/privacy/raw-data';
import { exportFileKey, HOUR_MS } from '../../../functions/domain/raw-data/export-layout';
import { decodeTable, encodeTable } from '../../../functions/domain/raw-data/export-parquet';
import { clickRow, eventRow } from '../../../functions/domain/raw-data/export-rows';
import { APP, auditKeyOf, click, DAY, MIN, RawWorld, line as streamLine } from './raw-data-fixtures';

const GONE = '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
const KEPT = '7d0e1f2a-3b4c-4d5e-8f60-718293a4b5c6';
const message: PrivacyMessage = { version: 1, request_id: 'r-1', app_id: 'app_1', company_id: 'com_1', install_uuid: GONE };

const line = (index: number, fields: Partial<AuditLine>): AuditLine => ({
  index,
  status: 'rejected',
  reason: 'bad_install_uuid',
  received_ms: 1,
  client_ip: '198.51.100.7',
  sdk_version: null,
  event: {},
  ...fields,
});

const installWithToken = (uuid: string) => ({ event_name: 'install', install_uuid: uuid, attribution: { adservices_token: 'stub-false' } });
const claim = (campaign: number): AdServicesAnswer => ({
  outcome: 'attributed',
  apple_ads: { campaign_id: campaign, ad_group_id: campaign + 1, org_id: 1, country_or_region: 'US', click_ms: 60_000 },
});

/** One install's partition naming one audit object, that object, and the install's postback items. */
function world(postbackCount: number) {
  const objects = new Map<string, readonly AuditLine[]>([
    [
      'audit/o',
      [
        line(0, { status: 'accepted', reason: undefined, install_uuid: GONE, event: installWithToken(GONE) }),
        line(1, { event: { install_uuid: ` ${GONE.toUpperCase()}` }, device_hash: 'h' }),
        line(2, { event: { install_uuid: [`{${GONE}}`] } }),
        line(3, { status: 'accepted', reason: undefined, install_uuid: KEPT, event: installWithToken(KEPT) }),
        line(4, { event: { install_uuid: ` ${KEPT}` } }),
      ],
    ],
  ]);
  // Apple's answers to the object's two tokens (lines 0 and 3), as adservices-enrich stores them.
  const answers = new Map<string, AdServicesAnswers>([
    [
      'audit/o',
      {
        version: 1,
        answers: [
          { index: 0, ...claim(7) },
          { index: 3, ...claim(9) },
        ],
      },
    ],
  ]);
  const postbacks: PostbackItemKey[] = Array.from({ length: postbackCount }, (_, n) => ({ pk: 'app_1', sk: `log#${n}` }));
  const asked: string[] = [];
  const ports: DrainPorts = {
    queue: { receive: async () => [], remove: async () => undefined, carry: async () => undefined, release: async () => undefined },
    installs: {
      firstItems: async () => ({ items: [{ pk: `app_1#${GONE}`, sk: 'a#audit/o', audit_key: 'audit/o' }], more: false }),
      deleteItems: async () => undefined,
    },
    clicks: { deleteMany: async (_appId, ids) => ids.length },
    auditObjects: {
      lines: async (key) => {
        const lines = objects.get(key);
        if (!lines) throw new AuditObjectError('missing_object', key);
        return [...lines];
      },
    },
    auditErasure: { delete: async (key) => void objects.delete(key), rewrite: async (key, lines) => void objects.set(key, lines) },
    adServicesAnswers: {
      get: async (key) => answers.get(key),
      rewrite: async (key, kept) => void answers.set(key, kept),
      delete: async (key) => void answers.delete(key),
    },
    rawData: new RawWorld().ports(),
    postbacks: {
      ofInstall: async (key, limit) => {
        asked.push(key);
        return { keys: postbacks.slice(0, limit), more: postbacks.length > limit };
      },
      deleteItems: async (keys) => void postbacks.splice(0, keys.length),
    },
    receipts: { record: async () => undefined },
    nowMs: () => 0,
    pause: async () => undefined,
    timeLeftMs: () => 600_000,
  };
  return { ports, objects, answers, postbacks, asked };
}

describe('erasing an install', () => {
  it('deletes the click the first-launch answer named, with the answer, when no counted decision named it', async () => {
    const { ports } = world(0);
    const deleted: string[] = [];
    const answer = { status: 'found', attribution: { partner: 'meta', click_id: 'Ck9', click_ms: 60_000 }, deep_link: null };
    const items: Record<string, unknown>[] = [{ pk: `app_1#${GONE}`, sk: 'first_launch', answer }];
    const erased: string[] = [];
    expect(
      await eraseInstall(
        {
          ...ports,
          installs: { firstItems: async () => ({ items, more: false }), deleteItems: async (_pk, keys) => void erased.push(...keys) },
          clicks: { deleteMany: async (_appId, ids) => deleted.push(...ids) },
        },
        message,
      ),
    ).toBe('done');
    expect(deleted).toEqual(['Ck9']);
    expect(erased).toEqual(['first_launch']);
  });

  it("erases the lines whose install_uuid, whatever its form, contains the install's UUID", async () => {
    const { ports, objects } = world(0);
    expect(await eraseInstall(ports, message)).toBe('done');
    expect(objects.get('audit/o')!.map((kept) => kept.index)).toEqual([3, 4]);
  });

  it("takes the install's Apple answer out of the answers object; the other install's stays joined to its own line", async () => {
    const { ports, objects, answers } = world(0);
    const receipts: DeletionCounts[] = [];
    ports.receipts.record = async (_id, update) => void receipts.push({ ...update.counts });
    expect(await eraseInstall(ports, message)).toBe('done');
    expect(answers.get('audit/o')).toEqual({ version: 1, answers: [{ index: 3, ...claim(9) }] });
    // The aggregator's join on a redelivery: the line left of KEPT gets campaign 9, as before the drain.
    const joined = withAnswers(objects.get('audit/o')!, answers.get('audit/o')!);
    expect(joined.map((kept) => [kept.install_uuid, kept.adservices?.apple_ads?.campaign_id])).toEqual([
      [KEPT, 9],
      [undefined, undefined],
    ]);
    expect(receipts.at(-1)).toMatchObject({ adservices_answers: 1, audit_objects_rewritten: 1 });
  });

  it('deletes the answers object with an audit object that held only lines of the install', async () => {
    const { ports, objects, answers } = world(0);
    objects.set('audit/o', objects.get('audit/o')!.slice(0, 3));
    answers.set('audit/o', { version: 1, answers: [{ index: 0, ...claim(7) }] });
    expect(await eraseInstall(ports, message)).toBe('done');
    expect(objects.has('audit/o')).toBe(false);
    expect(answers.has('audit/o')).toBe(false);
  });

  it('keeps an emptied answers object beside an audit object that stays, so an enriched redelivery still reads', async () => {
    const { ports, answers } = world(0);
    answers.set('audit/o', { version: 1, answers: [{ index: 0, ...claim(7) }] });
    expect(await eraseInstall(ports, message)).toBe('done');
    expect(answers.get('audit/o')).toEqual({ version: 1, answers: [] });
  });

  it("deletes the install's postbacks and attempts, found by its hashed key, 1,000 a run", async () => {
    const { ports, postbacks, asked } = world(MAX_ROWS_PER_TABLE + 5);
    expect(await eraseInstall(ports, message)).toBe('more');
    expect(asked).toEqual([installKey('app_1', GONE)]);
    expect(postbacks).toHaveLength(5);
    expect(await eraseInstall(ports, message)).toBe('done');
    expect(postbacks).toHaveLength(0);
  });
});

describe("erasing an install's raw data", () => {
  const receivedMs = DAY + 9 * HOUR_MS + 5 * MIN;
  const accepted = (index: number, installUuid: string): AuditLine =>
    line(index, {
      status: 'accepted',
      reason: undefined,
      install_uuid: installUuid,
      received_ms: receivedMs,
      event: { install_uuid: installUuid },
    });

  /**
   * An install whose claim log names an object of its counted events (in a stream object and the
   * export's files) and, another day, an object of a rejected line of it only (no event counted).
   */
  function rawWorld() {
    const raw = new RawWorld();
    const [counted, junk] = [auditKeyOf('counted'), auditKeyOf('junk', DAY + 24 * HOUR_MS)];
    const audit = new Map<string, readonly AuditLine[]>([
      [counted, [accepted(0, GONE), accepted(1, GONE), accepted(2, KEPT)]],
      [junk, [line(0, { event: { install_uuid: ` ${GONE}` } })]],
    ]);
    const pk = `${APP}#${GONE}`;
    const clickMs = receivedMs - 30 * MIN;
    const items = new Map<string, Record<string, unknown>>([
      ['c#00000001', { pk, sk: 'c#00000001', owner: tokenOf(counted), audit_key: counted, ids: ['i', 'p'], head: null }],
      ['c#00000002', { pk, sk: 'c#00000002', owner: tokenOf(junk), audit_key: junk, ids: [], head: null }],
      ['e#i', { pk, sk: 'e#i', decision: { partner: 'meta', click_id: 'Ck1', click_ms: clickMs } }],
      ['head', { pk, sk: 'head' }],
    ]);
    const lines = [
      streamLine('i', GONE, receivedMs, counted, true),
      streamLine('p', GONE, receivedMs, counted),
      streamLine('k', KEPT, receivedMs, counted),
    ];
    const object = raw.apply(receivedMs + MIN, lines);
    // Objects of other installs the day of the rejected line: no claim with counted events leads there.
    const elsewhere = raw.apply(DAY + 24 * HOUR_MS + MIN, [streamLine('x', KEPT, DAY + 24 * HOUR_MS, auditKeyOf('x'))], { marks: false });
    raw.files.set(exportFileKey('events', APP, '2026-03-10T09'), encodeTable('events', lines.map(eventRow)));
    raw.files.set(exportFileKey('clicks', APP, '2026-03-10T08'), encodeTable('clicks', [clickRow(click('Ck1', clickMs))]));
    const receipts: Record<string, unknown>[] = [];
    const ports: DrainPorts = {
      ...world(0).ports,
      installs: {
        firstItems: async (_pk, limit) => ({ items: [...items.values()].slice(0, limit), more: items.size > limit }),
        deleteItems: async (_pk, sortKeys) => {
          for (const sk of sortKeys) items.delete(sk);
        },
      },
      auditObjects: {
        lines: async (key) => {
          const found = audit.get(key);
          if (!found) throw new AuditObjectError('missing_object', key);
          return [...found];
        },
      },
      auditErasure: { delete: async (key) => void audit.delete(key), rewrite: async (key, kept) => void audit.set(key, kept) },
      rawData: raw.ports(),
      receipts: { record: async (_id, update) => void receipts.push(structuredClone(update)) },
      ...raw.clock,
    };
    const request: PrivacyMessage = { ...message, app_id: APP };
    return { raw, ports, items, audit, object, elsewhere, receipts, request };
  }

  it('follows the claims that counted events of it into the stream and the export files, before deleting them', async () => {
    const { raw, ports, items, audit, object, elsewhere, receipts, request } = rawWorld();
    expect(await eraseInstall(ports, request)).toBe('done');
    expect(raw.stream.objects.get(object)).toEqual([ERASED_LINE, ERASED_LINE, streamLine('k', KEPT, receivedMs, auditKeyOf('counted'))]);
    expect(raw.reads).not.toContain(elsewhere);
    expect((await decodeTable(raw.files.get(exportFileKey('events', APP, '2026-03-10T09'))!)).map((row) => row.event_id)).toEqual(['k']);
    expect(raw.files.has(exportFileKey('clicks', APP, '2026-03-10T08'))).toBe(false);
    expect(items.size).toBe(0);
    expect([...audit.keys()]).toEqual([auditKeyOf('counted')]);
    expect(receipts.at(-1)).toMatchObject({
      state: 'done',
      counts: {
        install_items: 4,
        clicks: 1,
        stream_objects_rewritten: 1,
        stream_lines: 2,
        export_files_rewritten: 1,
        export_files_deleted: 1,
        export_rows: 3,
      },
    });
  });

  it('keeps the claim that leads to a stream object not final yet, and carries the request; the next run erases it', async () => {
    const { raw, ports, items, object, request } = rawWorld();
    raw.lanes = [{ seq: 1, applied: 0, openedMs: receivedMs + MIN, apps: [APP] }];
    expect(await eraseInstall(ports, request)).toBe('more');
    expect([...items.keys()]).toEqual(['c#00000001']);
    expect(raw.stream.objects.get(object)?.map((stored) => stored.event.event_id)).toEqual(['i', 'p', 'k']);
    // The export file was cleaned all the same (an export may put the lines back from the object: the next run looks again).
    expect((await decodeTable(raw.files.get(exportFileKey('events', APP, '2026-03-10T09'))!)).map((row) => row.event_id)).toEqual(['k']);

    raw.lanes = [{ seq: 1, applied: 1 }];
    expect(await eraseInstall(ports, request)).toBe('done');
    expect(items.size).toBe(0);
    expect(raw.events()).toEqual(['-', '-', 'k', 'x']);
  });
});

describe('the drain', () => {
  it("goes on with the other apps' requests when one app's fails, and names that app and request", async () => {
    const { ports } = world(0);
    const requests = ['app_a', 'app_poisoned', 'app_c'].map((app_id, n) => ({
      message: { ...message, request_id: `r-${n}`, app_id },
      handle: `h-${n}`,
    }));
    const deliveries = [requests];
    const report = await drainPrivacyRequests({
      ...ports,
      queue: {
        receive: async () => deliveries.shift() ?? [],
        remove: async () => undefined,
        carry: async () => undefined,
        release: async () => undefined,
      },
      installs: {
        firstItems: async (pk, limit) => {
          if (pk.startsWith('app_poisoned#')) throw new Error('a partition nobody foresaw');
          return ports.installs.firstItems(pk, limit);
        },
        deleteItems: async () => undefined,
      },
    });
    expect(report.done).toEqual(['r-0', 'r-2']);
    expect(report.failed).toEqual([{ request_id: 'r-1', app_id: 'app_poisoned', error: 'a partition nobody foresaw' }]);
  });
});
