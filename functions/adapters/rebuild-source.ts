import { type EventClaim, installPk, type ObjectClaims, SK } from '../domain/aggregation/install-state';
import { poisonIfUnreadable } from '../domain/aggregation/message';
import { type RebuildSource, type RebuiltRow, rowOf } from '../domain/aggregation/rebuild';
import { type LinkFacts, resolveOpen } from '../domain/aggregation/reengagement';
import { ROW_FAMILIES, ROW_GROUPS } from '../domain/aggregation/rows';
import type { AttributionLookups } from '../domain/attribution/decision';
import { installDecision } from '../domain/attribution/first-launch';
import { auditDayPrefix } from '../domain/audit/keys';
import type { AuditObjects } from '../domain/audit/ports';
import { type App, appTimeZone } from '../domain/tenants/tenant';
import type { AggregateStore } from './aggregate-store';
import { FirstLaunchAnswers } from './first-launch-store';
import type { DynamoInstallStore } from './install-store';

/**
 * The two sides `admin rebuild` compares (functions/domain/aggregation/rebuild.ts): the audit
 * store and recorded decisions it recomputes the rows from, and the rows the aggregator keeps.
 */
export function rebuildSource(
  app: Pick<App, 'app_id' | 'company_id' | 'probabilistic' | 'probabilistic_basis' | 'max_pull' | 'time_zone' | 'reengagement_window_days'>,
  stores: {
    audit: AuditObjects;
    installs: DynamoInstallStore;
    lookups: AttributionLookups;
    links: { byId(linkId: string): Promise<LinkFacts | undefined> };
  },
): RebuildSource {
  const { audit, installs, lookups, links } = stores;
  const answers = new FirstLaunchAnswers(installs);
  return {
    appId: app.app_id,
    companyId: app.company_id,
    probabilistic: app.probabilistic,
    ...(app.probabilistic_basis === undefined ? {} : { probabilisticBasis: app.probabilistic_basis }),
    ...(app.max_pull?.on ? { maxPull: true } : {}),
    timeZone: appTimeZone(app),
    ...(app.reengagement_window_days === undefined ? {} : { reengagementWindowDays: app.reengagement_window_days }),
    // Audit objects are named by UTC receive day, then company and app (functions/domain/audit/keys.ts),
    // so one listing finds an app's objects of a day.
    keysOfDay: (day) => audit.keys(auditDayPrefix(day, app.company_id, app.app_id)),
    // An object missing or unreadable is one the rebuild lists as unreadable, as the aggregator does.
    lines: (key) => audit.lines(key).catch(poisonIfUnreadable),
    recordedDecision: async (installUuid, eventId) =>
      (await installs.get<EventClaim>(installPk(app.app_id, installUuid), SK.event(eventId)))?.decision,
    // The first-launch answer read as the aggregator reads it; the rebuild keeps nothing.
    decideAfresh: (facts) => installDecision(facts, lookups, { first: (appId, uuid) => answers.first(appId, uuid) }),
    // The link the live path resolved (its claim log item keeps it, or keeps none for an open that
    // named no link of the app); an open the live path has not counted yet is resolved afresh.
    reengagementLink: async ({ appId, installUuid, eventId, open }) => {
      const items = await installs.query<ObjectClaims>(installPk(appId, installUuid), SK.claimsPrefix);
      const item = items.find((claims) => claims.ids?.includes(eventId));
      if (!item)
        return resolveOpen(
          { link: (linkId) => links.byId(linkId), click: (appId, clickId) => lookups.clickById(appId, clickId) },
          appId,
          open,
        );
      const ref = item.opens?.find(([id]) => id === eventId);
      return ref && { linkId: ref[2], partner: ref[3], ...(ref[4] ? { campaign: ref[4] } : {}), clickId: ref[5] };
    },
  };
}

/** The app's stored rows in the rebuild's form; the group columns are attributes of each row. */
export async function liveRows(aggregates: AggregateStore, appId: string): Promise<RebuiltRow[]> {
  const rows: RebuiltRow[] = [];
  for (const family of ROW_FAMILIES) {
    for (const row of await aggregates.rows(appId, family)) {
      rows.push(
        rowOf(
          family,
          row.day,
          ROW_GROUPS[family].map((column) => String(row[column])),
          row,
        ),
      );
    }
  }
  return rows;
}
