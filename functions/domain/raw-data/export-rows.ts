import { toMicros } from '../aggregation/rows';
import { explain } from '../attribution/explanation';
import { dayOf } from '../common/days';
import { type ClickRecord, claimDeadline } from '../links/click';
import type { PostbackRecord } from '../skan/postback-record';
import type { StreamConsent, StreamLine } from './stream-objects';
import { RAW_TABLES, type RawColumn } from './tables';

/**
 * One exported row of each table from what the service keeps (docs/raw-data.md#warehouse-exports):
 * events and installs from stream lines, clicks from click records, skan_postbacks from the
 * postback records of the audit bucket. A row has exactly its table's columns (RAW_TABLES), each
 * a value of the column's type or null.
 */

export type ExportValue = string | number | boolean | null;
export type ExportRow = Readonly<Record<string, ExportValue>>;

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

/** An event as the stream has it, with the day the reports count it on and its revenue as they add it up. */
export function eventRow({ event }: StreamLine): ExportRow {
  const attribution = event.attribution;
  const revenue = event.revenue_usd;
  return {
    event_id: event.event_id,
    event_name: event.event_name,
    install_uuid: event.install_uuid,
    ts_ms: event.ts_ms,
    corrected_ts: event.corrected_ts,
    received_ms: event.received_ms,
    event_day: dayOf(event.corrected_ts),
    revenue_usd: typeof revenue === 'number' ? revenue : null,
    // As the aggregator counts it (functions/domain/aggregation/contributions.ts).
    revenue_micros: typeof revenue === 'number' && revenue > 0 ? toMicros(revenue) : 0,
    platform: event.platform ?? null,
    properties: json(event.properties),
    country: event.country ?? null,
    partner: attribution?.partner ?? null,
    campaign: attribution?.campaign ?? null,
    attribution_type: attribution?.attribution_type ?? null,
    link_id: attribution?.link_id ?? null,
    ext_click_id: attribution?.ext_click_id ?? null,
    sub1: attribution?.sub1 ?? null,
    sub2: attribution?.sub2 ?? null,
    sub3: attribution?.sub3 ?? null,
    sub4: attribution?.sub4 ?? null,
    sub5: attribution?.sub5 ?? null,
    is_reinstall: attribution?.is_reinstall ?? null,
    fraud_reasons: attribution ? JSON.stringify(attribution.fraud_reasons) : null,
    install_corrected_ts: attribution?.install_corrected_ts ?? null,
    install_event_id: attribution?.install_event_id ?? null,
    ...adRevenueColumns(event.ad_revenue),
    ...consentColumns(event.consent),
    transaction_id: text(event.transaction_id),
    ...refundColumns(event.refund),
  };
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** An ad_revenue event's impression as columns; every one null on other events. */
function adRevenueColumns(ad: Record<string, unknown> | undefined): ExportRow {
  return {
    ad_source: text(ad?.source),
    ad_network: text(ad?.network),
    ad_format: text(ad?.format),
    ad_placement: text(ad?.placement),
    ad_unit: text(ad?.ad_unit),
    ad_precision: text(ad?.precision),
    impression_id: text(ad?.impression_id),
    ad_revenue: typeof ad?.revenue === 'number' ? ad.revenue : null,
    ad_currency: text(ad?.currency),
  };
}

/** A refund event's refund as columns; every one null on other events. */
function refundColumns(refund: Record<string, unknown> | undefined): ExportRow {
  return {
    refund_purchase_event_id: text(refund?.purchase_event_id),
    refund_transaction_id: text(refund?.transaction_id),
    refund_revenue: typeof refund?.revenue === 'number' ? refund.revenue : null,
    refund_currency: text(refund?.currency),
  };
}

/** The consent the line carries as columns; every one null when none was known (or on a line written before consent was streamed). */
function consentColumns(consent: StreamConsent | null | undefined): ExportRow {
  return {
    consent_gdpr_applies: consent?.gdpr_applies ?? null,
    consent_tcf_string: consent?.tcf_string ?? null,
    consent_ad_user_data: consent?.ad_user_data ?? null,
    consent_ad_personalization: consent?.ad_personalization ?? null,
    consent_third_party_sharing: consent?.third_party_sharing ?? null,
    consent_measurement: consent?.measurement ?? null,
    consent_ts: consent?.ts_ms ?? null,
    consent_event_id: consent?.event_id ?? null,
  };
}

/** The install a stream line counted, with its decision and why; undefined for a line that counted no install. */
export function installRow({ event, install }: StreamLine): ExportRow | undefined {
  if (!install) return undefined;
  const decision = install.decision;
  return {
    install_uuid: event.install_uuid,
    install_event_id: event.event_id,
    ts_ms: event.ts_ms,
    corrected_ts: event.corrected_ts,
    received_ms: event.received_ms,
    install_day: dayOf(event.corrected_ts),
    platform: event.platform ?? null,
    country: decision.country ?? event.country ?? null,
    partner: decision.partner,
    campaign: decision.campaign ?? null,
    attribution_type: decision.attribution_type,
    rule: decision.rule,
    link_id: decision.link_id ?? null,
    click_id: decision.click_id ?? null,
    ext_click_id: decision.ext_click_id ?? null,
    sub1: decision.sub1 ?? null,
    sub2: decision.sub2 ?? null,
    sub3: decision.sub3 ?? null,
    sub4: decision.sub4 ?? null,
    sub5: decision.sub5 ?? null,
    click_ms: decision.click_ms ?? null,
    ctit_seconds: decision.ctit_seconds ?? null,
    is_reinstall: decision.reinstall,
    reinstall_reason: decision.reinstall_reason ?? null,
    fraud_reasons: JSON.stringify(decision.fraud_reasons),
    first_install: install.first,
    previous_install_event_id: install.previous_install_event_id ?? null,
    explanation: explain(decision),
    decision: JSON.stringify(decision),
    ...consentColumns(event.consent),
  };
}

/**
 * A click without its address: the columns are picked by name from RAW_TABLES.clicks, so the IP,
 * its block and the (app, IP, platform) key, or any field added to the record later, never reach
 * a file unless the table names it.
 */
export function clickRow(click: ClickRecord): ExportRow {
  // expires_at is the claim deadline, as the column says; the stored one is the TTL, kept longer.
  const fields = { ...click, expires_at: claimDeadline(click) } as unknown as Record<string, unknown>;
  return Object.fromEntries(RAW_TABLES.clicks.columns.map((column) => [column.name, typedValue(column, fields[column.name])]));
}

/** Where each skan_postbacks column is read from: SKAdNetwork's field, AdAttributionKit's field. */
const SKAN_FIELDS: Readonly<Record<string, readonly [skadnetwork: string | undefined, adAttributionKit: string | undefined]>> = {
  ad_network_id: ['ad-network-id', 'ad-network-identifier'],
  advertised_app_id: ['app-id', 'advertised-item-identifier'],
  campaign_id: ['campaign-id', undefined],
  source_identifier: ['source-identifier', 'source-identifier'],
  source_app_id: ['source-app-id', 'publisher-item-identifier'],
  source_domain: ['source-domain', undefined],
  marketplace_identifier: [undefined, 'marketplace-identifier'],
  fidelity_type: ['fidelity-type', undefined],
  impression_type: [undefined, 'impression-type'],
  redownload: ['redownload', undefined],
  conversion_type: [undefined, 'conversion-type'],
  did_win: ['did-win', 'did-win'],
  postback_sequence_index: ['postback-sequence-index', 'postback-sequence-index'],
  conversion_value: ['conversion-value', 'conversion-value'],
  coarse_conversion_value: ['coarse-conversion-value', 'coarse-conversion-value'],
  ad_interaction_type: [undefined, 'ad-interaction-type'],
  country_code: [undefined, 'country-code'],
};

/**
 * A postback record as exported: its verification, Apple's fields under column names (a signed
 * field wins over an unsigned one of the same name), and both field sets whole as JSON text.
 * Values come from the sender, so each is kept only when it has the column's type.
 */
export function skanRow(record: PostbackRecord): ExportRow {
  const fields: Record<string, unknown> = { ...record.unverified, ...record.signed };
  const which = record.kind === 'skadnetwork' ? 0 : 1;
  const own: Record<string, unknown> = {
    transaction_id: record.transaction_id,
    kind: record.kind,
    received_ms: record.received_ms,
    verified: record.verified,
    reason: record.reason,
    reason_field: record.reason_field,
    key_id: record.key_id,
    key_environment: record.key_environment,
    version: record.version,
    signed: JSON.stringify(record.signed),
    unverified: JSON.stringify(record.unverified),
  };
  return Object.fromEntries(
    RAW_TABLES.skan_postbacks.columns.map((column) => {
      const source = SKAN_FIELDS[column.name];
      const field = source?.[which];
      return [column.name, typedValue(column, source ? (field === undefined ? undefined : fields[field]) : own[column.name])];
    }),
  );
}

/**
 * A value of the column's type, or null. Identifiers Apple sends as numbers (app-id) are kept as
 * their text; a number written as text ("3") is a number; a boolean as text ("true") a boolean.
 */
export function typedValue(column: RawColumn, value: unknown): ExportValue {
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case 'string':
      return typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : JSON.stringify(value);
    case 'bigint': {
      const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      return typeof number === 'number' && Number.isSafeInteger(number) ? number : null;
    }
    case 'double': {
      const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      return typeof number === 'number' && Number.isFinite(number) ? number : null;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 1) return true;
      if (value === 'false' || value === 0) return false;
      return null;
  }
}
