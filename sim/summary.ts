import { formatDifference } from './check';
import type { SimulationResult } from './run';

/** The human-readable account of a run: what was sent, per app, with the keys to read its reports. */
export function summaryText(result: SimulationResult): string {
  const lines: string[] = [];
  lines.push(
    `Simulated traffic, seed ${result.seed}, against ${result.base_url} (${result.addressing === 'many' ? 'many client addresses' : 'one client address'})`,
  );
  lines.push(`Company key: ${result.company_key}`);
  for (const app of result.apps) {
    const c = app.clicks;
    const dropped = Object.entries(c.dropped)
      .map(([why, n]) => `${n} ${why.replace(/_/g, ' ')}`)
      .join(', ');
    const planned = Object.entries(app.installs.planned)
      .map(([kind, n]) => `${n} ${kind.replace(/_/g, ' ')}`)
      .join(', ');
    const x = app.installs.expected;
    lines.push('');
    lines.push(`${app.name}${app.probabilistic ? ' (probabilistic matching on)' : ''}, days in ${app.time_zone}`);
    lines.push(`  app key     ${app.app_key}`);
    lines.push(`  server key  ${app.server_key}`);
    lines.push(`  partners    ${app.partners.join(', ')}`);
    lines.push(
      `  clicks      ${c.sent} sent: ${c.recorded} recorded, ${Object.values(c.dropped).reduce((a, b) => a + (b ?? 0), 0)} dropped (${dropped || 'none'})` +
        `, ${c.rate_limited} rate-limited, ${c.honeypot_hits} honeypot hits${c.waited_for_rate_limit ? `, ${c.waited_for_rate_limit} waits for the rate limit` : ''}`,
    );
    lines.push(`  installs    ${planned}`);
    lines.push(
      `              expected: ${x.deterministic} deterministic, ${x.probabilistic} probabilistic, ${x.organic} organic; ${x.reinstalls} reinstalls, ${x.fraud_flagged} fraud-flagged`,
    );
    lines.push(
      `  events      ${app.events.accepted} accepted, ${app.events.rejected} rejected (malformed on purpose) in ${app.events.batches} batches;` +
        ` ${app.events.retried_identical + app.events.retried_reencoded} batches sent again (${app.events.retried_identical} byte for byte, ${app.events.retried_reencoded} re-encoded)`,
    );
    lines.push(`  purchases   ${app.purchases}, revenue $${app.revenue_usd.toFixed(2)}`);
    const ad = app.ad_revenue;
    if (ad.impressions > 0)
      lines.push(
        `  ad revenue  ${ad.impressions} impressions, $${ad.usd.toFixed(4)}: ${ad.by_sdk} reports by the SDK, ${ad.by_server} by the server` +
          ` (POST /api/v1/ad-revenue), ${ad.duplicates} duplicates counted once`,
      );
    if (app.cost.rows > 0)
      lines.push(
        `  cost        ${app.cost.rows} rows, $${app.cost.usd.toFixed(2)}, in ${app.cost.requests} uploads (${app.cost.restated} rows sent again, restated or not)`,
      );
    const k = app.skan;
    if (k.sent > 0)
      lines.push(
        `  skan        ${k.sent} postbacks to App Store id ${app.app_store_id}: ${k.transactions} transactions, ${k.copies} copies (Apple's retries),` +
          ` ${k.tampered} tampered, ${k.unknown_app} for an unknown app; schema versions ${k.schema_versions.join(', ')}`,
      );
    const ads = app.apple_ads;
    const tokens = (ads.attributed ?? 0) + (ads.not_attributed ?? 0) + (ads.bad_token ?? 0);
    if (tokens > 0)
      lines.push(
        `  apple ads   ${tokens} installs with an AdServices token: ${ads.attributed ?? 0} claimed (${ads.not_ready_first ?? 0} after two 404s),` +
          ` ${ads.not_attributed ?? 0} not attributed, ${ads.bad_token ?? 0} bad token`,
      );
    const r = app.retention;
    const pct = (n: number) => (r.installs ? `${((100 * n) / r.installs).toFixed(1)}%` : '-');
    lines.push(`  retention   ${r.installs} installs: D1 ${r.d1} (${pct(r.d1)}), D7 ${r.d7} (${pct(r.d7)}), D30 ${r.d30} (${pct(r.d30)})`);
  }
  lines.push('');
  lines.push(...result.notes);
  if (result.problems.length) {
    lines.push('', `${result.problems.length} thing(s) did not go as arranged:`);
    lines.push(...result.problems.map((p) => `  ${p}`));
  }
  if (result.checked) {
    lines.push('');
    const perf = result.apps.reduce((n, app) => n + app.performance_checks.length, 0);
    if (result.differences.length === 0)
      lines.push(
        `Check: all four reports of every app match what was sent${perf ? `, and so do ${perf} performance report queries` : ''}` +
          `${result.apps.some((app) => app.skan.sent > 0) ? `${perf ? ' and' : ', and so does'} the SKAN report` : ''}.`,
      );
    else {
      lines.push(`Check: ${result.differences.length} difference(s) between the reports and what was sent:`);
      lines.push(...result.differences.map((d) => `  ${d.app}: ${formatDifference(d)}`));
    }
  } else {
    lines.push('', 'Reports fill in within seconds, for example:');
    const app = result.apps[0];
    if (app) lines.push(`  curl -s "${result.base_url}/api/v1/reports/attribution" -H "authorization: Bearer ${app.server_key}"`);
  }
  return lines.join('\n');
}

/** The run as JSON, without the expected rows (they are what --check compares). */
export function summaryJson(result: SimulationResult): unknown {
  return {
    ...result,
    apps: result.apps.map(({ expected: _expected, expected_skan: _skan, ...app }) => app),
    differences: result.differences.map((d) => ({ ...d, text: formatDifference(d) })),
  };
}

/** With --check, whether the run found anything wrong: a report difference or a request the service did not answer as arranged. */
export const failed = (result: SimulationResult) => result.checked && (result.differences.length > 0 || result.problems.length > 0);
