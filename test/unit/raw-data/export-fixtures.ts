import type { AttributionDecision } from '../../../functions/domain/attribution/decision';
import { buildClick, type ClickRecord } from '../../../functions/domain/links/click';
import { type StreamLine, streamAttribution } from '../../../functions/domain/raw-data/stream-objects';

/** Stream lines, decisions and clicks as the aggregator and the redirect make them, for the export's tests. */

export const APP = 'app_0123456789abcdef0123';
export const OTHER_APP = 'app_fedcba9876543210fedc';

export const CLICKED: AttributionDecision = {
  partner: 'meta',
  attribution_type: 'deterministic',
  rule: 'click_id',
  reinstall: false,
  click_id: 'Ck1',
  link_id: 'Lk1',
  campaign: 'spring',
  ext_click_id: 'ext-9',
  sub1: 'a',
  sub3: 'c',
  country: 'FR',
  click_ms: 1_000,
  window: { from_ms: 0, to_ms: 61_000, lookback_days: 7 },
  ctit_seconds: 60,
  fraud_reasons: [],
};

export const ORGANIC: AttributionDecision = {
  partner: 'organic',
  attribution_type: 'organic',
  rule: 'no_match',
  reinstall: false,
  fraud_reasons: [],
};

export const uuidOf = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * A line of a stream object: event `id` of install `install` received at `receivedMs`. An install
 * line carries its decision; another line the attribution of its install, or null (`held`).
 */
export function streamLine(
  id: string,
  receivedMs: number,
  options: {
    install?: number;
    name?: string;
    decision?: AttributionDecision;
    counted?: 'install' | 'attributed' | 'held';
    revenue?: number | null;
    properties?: Record<string, unknown> | null;
  } = {},
): StreamLine {
  const decision = options.decision ?? CLICKED;
  const counted = options.counted ?? (options.name === 'install' ? 'install' : 'attributed');
  const installUuid = uuidOf(options.install ?? 1);
  const event = {
    event_id: id,
    event_name: options.name ?? (counted === 'install' ? 'install' : 'purchase'),
    install_uuid: installUuid,
    ts_ms: receivedMs - 2_000,
    corrected_ts: receivedMs - 1_000,
    received_ms: receivedMs,
    revenue_usd: options.revenue === undefined ? null : options.revenue,
    platform: 'ios' as const,
    properties: options.properties ?? null,
    country: 'DE',
    attribution:
      counted === 'held' ? null : streamAttribution(decision, receivedMs - 1_000, counted === 'install' ? id : `install-of-${installUuid}`),
  };
  return {
    o: `owner-${id}`,
    event,
    ...(counted === 'install' ? { install: { first: true, previous_install_event_id: null, decision } } : {}),
  };
}

/** A click as the redirect records it (with its address, which no export may carry). */
export function click(id: string, tsMs: number, appId = APP): ClickRecord {
  return buildClick({
    clickId: id,
    link: { link_id: 'Lk1', app_id: appId, company_id: 'co_1', partner: 'meta', campaign: 'spring', lookback_days: 7 },
    address: { ip: '203.0.113.77', block: '203.0.113.0/24' },
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)',
    platform: 'ios',
    country: 'US',
    asn: 64500,
    query: { click_id: 'partner-click-1', sub1: 's1', sub5: 's5' },
    nowMs: tsMs,
  });
}
