import { readFileSync } from 'node:fs';
import { toMicros } from '../../../functions/domain/aggregation/rows';
import { explain } from '../../../functions/domain/attribution/explanation';
import { ipPlatformHash } from '../../../functions/domain/links/click-log-key';
import { clickRow, eventRow, installRow, skanRow, typedValue } from '../../../functions/domain/raw-data/export-rows';
import type { StreamLine } from '../../../functions/domain/raw-data/stream-objects';
import { PARTITION_COLUMNS, RAW_TABLE_NAMES, RAW_TABLES } from '../../../functions/domain/raw-data/tables';
import { APPLE_KEYS } from '../../../functions/domain/skan/postback-keys';
import { judgePostback, type PostbackRecord } from '../../../functions/domain/skan/postback-record';
import { SKADNETWORK_EXAMPLES } from '../skan/postbacks';
import { CLICKED, click, ORGANIC, streamLine } from './export-fixtures';

/** A refund event's line, with its refund and (as no refund has one) a stray transaction id: every new column set. */
const withRefund = (line: StreamLine): StreamLine => ({
  ...line,
  event: { ...line.event, transaction_id: 'T-1', refund: { purchase_event_id: 'p-1', transaction_id: 'T-1', revenue: 1, currency: 'USD' } },
});

const columnsOf = (table: keyof typeof RAW_TABLES) => RAW_TABLES[table].columns.map((column) => column.name);

describe('the exported rows', () => {
  it('gives every row exactly its table’s columns, each of the column’s type or null', () => {
    const rows = {
      events: [
        eventRow(streamLine('e1', 1_000, { revenue: 2.5, properties: { level: 3 } })),
        eventRow(streamLine('e2', 1_000, { counted: 'held' })),
        eventRow(withRefund(streamLine('e3', 1_000, { name: 'refund', revenue: 1 }))),
      ],
      installs: [installRow(streamLine('i1', 1_000, { name: 'install' }))],
      clicks: [clickRow(click('Ck1', 1_000))],
      skan_postbacks: [skanRow(judged(SKADNETWORK_EXAMPLES[0]?.postback))],
    };
    for (const table of RAW_TABLE_NAMES) {
      for (const row of rows[table]) {
        expect(Object.keys(row ?? {})).toEqual(columnsOf(table));
        for (const column of RAW_TABLES[table].columns) {
          const value = row?.[column.name];
          if (value === null) continue;
          const expected = { string: 'string', bigint: 'number', double: 'number', boolean: 'boolean' }[column.type];
          expect([column.name, typeof value]).toEqual([column.name, expected]);
          if (column.type === 'bigint') expect(Number.isSafeInteger(value)).toBe(true);
        }
      }
    }
  });

  it('keeps the partition columns out of every table and every column name unique', () => {
    for (const table of RAW_TABLE_NAMES) {
      const names = columnsOf(table);
      expect(new Set(names).size).toBe(names.length);
      for (const partition of PARTITION_COLUMNS) expect(names).not.toContain(partition.name);
    }
  });

  it('maps an event with the day the reports count it on and its revenue as the aggregator adds it up', () => {
    const receivedMs = Date.UTC(2026, 0, 2, 0, 0, 0, 500); // corrected_ts is a second earlier: the day before
    const row = eventRow(streamLine('e1', receivedMs, { revenue: 1.2345675, properties: { level: 3 } }));
    expect(row).toMatchObject({
      event_id: 'e1',
      received_ms: receivedMs,
      event_day: '2026-01-01',
      revenue_usd: 1.2345675,
      revenue_micros: toMicros(1.2345675),
      properties: '{"level":3}',
      partner: 'meta',
      campaign: 'spring',
      attribution_type: 'deterministic',
      sub1: 'a',
      sub2: null,
      is_reinstall: false,
      fraud_reasons: '[]',
      install_event_id: 'install-of-00000000-0000-4000-8000-000000000001',
    });
    expect(eventRow(streamLine('e2', receivedMs)).revenue_micros).toBe(0);
    expect(eventRow(streamLine('e3', receivedMs, { revenue: -4 })).revenue_micros).toBe(0);
  });

  it('leaves the attribution columns null for an event counted before its install', () => {
    const row = eventRow(streamLine('e1', 1_000, { counted: 'held' }));
    expect(row).toMatchObject({ partner: null, attribution_type: null, is_reinstall: null, fraud_reasons: null, install_event_id: null });
  });

  it("carries the line's consent on the event and the install rows, and nulls where none was known", () => {
    const consent = {
      gdpr_applies: true,
      tcf_string: 'CQabc.YAAA',
      ad_user_data: false,
      ad_personalization: null,
      third_party_sharing: null,
      measurement: true,
      ts_ms: 900,
      event_id: 'c1',
    };
    const withConsent = (line: StreamLine): StreamLine => ({ ...line, event: { ...line.event, consent } });
    const columns = {
      consent_gdpr_applies: true,
      consent_tcf_string: 'CQabc.YAAA',
      consent_ad_user_data: false,
      consent_ad_personalization: null,
      consent_third_party_sharing: null,
      consent_measurement: true,
      consent_ts: 900,
      consent_event_id: 'c1',
    };
    expect(eventRow(withConsent(streamLine('e1', 1_000)))).toMatchObject(columns);
    expect(installRow(withConsent(streamLine('i1', 1_000, { name: 'install' })))).toMatchObject(columns);
    // None known, or a line written before consent was streamed: every consent column null.
    const none = Object.fromEntries(Object.keys(columns).map((name) => [name, null]));
    expect(eventRow({ ...streamLine('e2', 1_000), event: { ...streamLine('e2', 1_000).event, consent: null } })).toMatchObject(none);
    expect(installRow(streamLine('i2', 1_000, { name: 'install' }))).toMatchObject(none);
  });

  it("carries a refund's members and a purchase's transaction id as their columns, null on other events", () => {
    const line = streamLine('r1', 1_000, { name: 'refund', revenue: 5.4 });
    const refund = { ...line, event: { ...line.event, refund: { transaction_id: 'GPA.1', revenue: 4.99, currency: 'EUR' } } };
    expect(eventRow(refund)).toMatchObject({
      event_name: 'refund',
      revenue_usd: 5.4,
      transaction_id: null,
      refund_purchase_event_id: null,
      refund_transaction_id: 'GPA.1',
      refund_revenue: 4.99,
      refund_currency: 'EUR',
    });
    const bought = streamLine('p1', 1_000, { revenue: 9.99 });
    expect(eventRow({ ...bought, event: { ...bought.event, transaction_id: 'GPA.1' } })).toMatchObject({
      transaction_id: 'GPA.1',
      refund_purchase_event_id: null,
      refund_transaction_id: null,
      refund_revenue: null,
      refund_currency: null,
    });
    expect(
      eventRow({ ...refund, event: { ...refund.event, refund: { purchase_event_id: 'p1', revenue: 1, currency: 'USD' } } }),
    ).toMatchObject({ refund_purchase_event_id: 'p1', refund_transaction_id: null, refund_revenue: 1 });
  });

  it('maps an install with its decision, whole and explained', () => {
    const flagged = {
      ...CLICKED,
      reinstall: true,
      reinstall_reason: 'same_install_uuid' as const,
      fraud_reasons: ['ctit_under_10s' as const],
    };
    const row = installRow(streamLine('i1', 5_000, { name: 'install', decision: flagged }));
    expect(row).toMatchObject({
      install_event_id: 'i1',
      partner: 'meta',
      rule: 'click_id',
      click_id: 'Ck1',
      link_id: 'Lk1',
      country: 'FR',
      click_ms: 1_000,
      ctit_seconds: 60,
      is_reinstall: true,
      reinstall_reason: 'same_install_uuid',
      fraud_reasons: '["ctit_under_10s"]',
      first_install: true,
      previous_install_event_id: null,
      explanation: explain(flagged),
    });
    expect(JSON.parse(String(row?.decision))).toEqual(flagged);
    expect(installRow(streamLine('i2', 5_000, { name: 'install', decision: ORGANIC }))).toMatchObject({
      partner: 'organic',
      click_id: null,
      country: 'DE',
      explanation: 'organic: no click matched',
    });
    expect(installRow(streamLine('e1', 5_000))).toBeUndefined();
  });

  it('exports a click without its address or anything made of it', () => {
    const recorded = click('Ck1', 1_000);
    // As click_log holds it: its sort key starts with a hash of the address.
    const iph = ipPlatformHash(recorded.app_ip_platform);
    const row = clickRow({
      ...recorded,
      pk: `${recorded.app_id}#1970-01-01T00#${iph[0]}`,
      sk: `${iph}#000000000001000#Ck1`,
    } as typeof recorded);
    const text = JSON.stringify(row);
    for (const secret of [recorded.ip, recorded.ip_block, recorded.app_ip_platform, '203.0.113', iph]) expect(text).not.toContain(secret);
    expect(Object.keys(row)).toEqual(columnsOf('clicks'));
    expect(row).toMatchObject({
      click_id: 'Ck1',
      ext_click_id: 'partner-click-1',
      sub1: 's1',
      sub5: 's5',
      asn: 64500,
      country: 'US',
      ts_ms: 1_000,
    });
  });

  it('maps a verified SKAdNetwork postback with its fields and its verification', () => {
    const example = SKADNETWORK_EXAMPLES.find((e) => e.name.startsWith('3.0 winning'));
    const record = judged(example?.postback);
    const row = skanRow(record);
    expect(row).toMatchObject({
      kind: 'skadnetwork',
      verified: true,
      reason: null,
      version: '3.0',
      ad_network_id: example?.postback['ad-network-id'],
      advertised_app_id: String(example?.postback['app-id']),
      did_win: true,
      received_ms: 7_000,
    });
    expect(JSON.parse(String(row.signed))).toEqual(record.signed);
    expect(JSON.parse(String(row.unverified))).toEqual(record.unverified);
  });

  it('maps an AdAttributionKit record by its own field names, and a postback that did not verify with its reason', () => {
    const record: PostbackRecord = {
      record_version: 1,
      kind: 'adattributionkit',
      transaction_id: 'pb-1',
      received_ms: 9_000,
      verified: false,
      reason: 'bad_signature',
      key_id: 'kid-1',
      signed: {
        'postback-identifier': 'pb-1',
        'ad-network-identifier': 'net.example',
        'advertised-item-identifier': 123,
        'publisher-item-identifier': 456,
        'impression-type': 'app-impression',
        'conversion-type': 'download',
        'did-win': true,
        'postback-sequence-index': 0,
      },
      unverified: { 'conversion-value': 42, 'coarse-conversion-value': 'high', 'country-code': 'US', 'ad-interaction-type': 'click' },
      signature: 'x.y.z',
    };
    expect(skanRow(record)).toMatchObject({
      kind: 'adattributionkit',
      verified: false,
      reason: 'bad_signature',
      ad_network_id: 'net.example',
      advertised_app_id: '123',
      source_app_id: '456',
      impression_type: 'app-impression',
      conversion_type: 'download',
      did_win: true,
      postback_sequence_index: 0,
      conversion_value: 42,
      coarse_conversion_value: 'high',
      country_code: 'US',
      ad_interaction_type: 'click',
      fidelity_type: null,
      redownload: null,
    });
  });

  it('keeps a sender’s value only when it has the column’s type', () => {
    const bigint = { name: 'n', type: 'bigint' as const, doc: '' };
    const boolean = { name: 'b', type: 'boolean' as const, doc: '' };
    const double = { name: 'd', type: 'double' as const, doc: '' };
    const string = { name: 's', type: 'string' as const, doc: '' };
    expect([
      typedValue(bigint, '3'),
      typedValue(bigint, 2.5),
      typedValue(bigint, 'x'),
      typedValue(bigint, {}),
      typedValue(bigint, 2 ** 60),
    ]).toEqual([3, null, null, null, null]);
    expect([typedValue(boolean, 'true'), typedValue(boolean, 0), typedValue(boolean, 'yes')]).toEqual([true, false, null]);
    expect([typedValue(double, '1.5'), typedValue(double, Number.NaN)]).toEqual([1.5, null]);
    expect([typedValue(string, 12), typedValue(string, { a: 1 }), typedValue(string, undefined)]).toEqual(['12', '{"a":1}', null]);
  });

  it('has every column of every table in docs/raw-data.md, with its type and doc', () => {
    const docs = readFileSync(`${__dirname}/../../../docs/raw-data.md`, 'utf8');
    const start = docs.indexOf('\n## Warehouse exports\n');
    expect(start).toBeGreaterThan(0);
    const end = docs.indexOf('\n## ', start + 1);
    const section = docs.slice(start, end < 0 ? undefined : end);
    for (const table of RAW_TABLE_NAMES) {
      const heading = section.indexOf(`### \`${table}\``);
      expect([table, heading >= 0]).toEqual([table, true]);
      for (const column of RAW_TABLES[table].columns) {
        expect(section.slice(heading)).toContain(`| \`${column.name}\` | ${column.type} | ${column.doc.replaceAll('|', '\\|')} |`);
      }
    }
  });
});

function judged(postback: Record<string, unknown> | undefined): PostbackRecord {
  const record = postback && judgePostback(postback, APPLE_KEYS, 7_000);
  if (!record) throw new Error('the fixture is not a postback');
  return record;
}
