import { z } from 'zod';
import { resolveHost } from '../adapters/postback-http';
import { PostbackConfigs, PostbackRecords } from '../adapters/postback-store';
import { NotFoundError } from '../adapters/tenant-store';
import { PostbackConfigError, postbackConfig } from '../domain/partner-postbacks/config';
import { checkDestination, type DestinationPolicy, DestinationRefused, policyFromEnv } from '../domain/partner-postbacks/destination';
import { renderTemplate } from '../domain/partner-postbacks/template';
import {
  DEFAULT_WITHHELD_DAYS,
  DEFAULT_WITHHELD_LISTED,
  MAX_WITHHELD_DAYS,
  MAX_WITHHELD_LISTED,
  withheldForConsent,
} from '../domain/partner-postbacks/withheld';
import { resourceName } from '../shared/config';
import { appByKey } from './apps';
import { defineCommand, type Target } from './command';
import { key, partner } from './flags';

/**
 * A deployed stack never allows loopback; the local runtime does when it was started with
 * POSTBACK_ALLOW_LOOPBACK=1 (it says so in endpoints.json, which the local target reads into
 * Target.postbackAllowLoopback), so a template for a local receiver is accepted there and refused
 * everywhere else. The console API's function has neither: its bundle defines the switch away.
 */
function policyOf(target: Target): DestinationPolicy {
  if (target.stack) return { allowLoopback: false };
  return target.postbackAllowLoopback === undefined ? policyFromEnv() : { allowLoopback: target.postbackAllowLoopback };
}

const configs = () => new PostbackConfigs(resourceName.table('postbacks'));

/** Partner postbacks (docs/postbacks.md): templates per app and partner, and the delivery log. */
export const postbackCommands = [
  defineCommand({
    name: 'postback set',
    usage:
      'postback set --app-key K --partner P --url TEMPLATE [--events install,purchase,...|*] [--event-window-days N]\n' +
      '             [--method GET|POST] [--send-fraud] [--tcf-vendor-id N]   (macros and consent: docs/postbacks.md)',
    flags: z.object({
      'app-key': key,
      partner,
      url: z.string().min(1),
      events: z.string().min(1).optional(),
      'event-window-days': z.coerce.number().int().min(0).optional(),
      method: z.string().optional(),
      'send-fraud': z.boolean().optional(),
      'tcf-vendor-id': z.coerce.number().optional(),
    }),
    booleanFlags: ['send-fraud'],
    async execute(f, target) {
      const app = await appByKey(f['app-key']);
      const config = postbackConfig(
        app.app_id,
        {
          partner: f.partner,
          url: f.url,
          events: f.events,
          eventWindowDays: f['event-window-days'],
          method: f.method,
          sendFraud: f['send-fraud'],
          tcfVendorId: f['tcf-vendor-id'],
        },
        Date.now(),
      );
      // The destination as the sender will see it: every macro filled, the host resolved and checked.
      try {
        await checkDestination(renderTemplate(config.url, {}), policyOf(target), resolveHost);
      } catch (error) {
        if (error instanceof DestinationRefused) throw new PostbackConfigError(`--url: ${error.message}`);
        throw error;
      }
      await configs().put(config);
      return config;
    },
  }),
  defineCommand({
    name: 'postback list',
    usage: 'postback list --app-key K',
    flags: z.object({ 'app-key': key }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      return { app_id: app.app_id, postbacks: await configs().list(app.app_id) };
    },
  }),
  defineCommand({
    name: 'postback delete',
    usage: 'postback delete --app-key K --partner P',
    flags: z.object({ 'app-key': key, partner }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      if (!(await configs().delete(app.app_id, f.partner))) throw new NotFoundError('postback configuration');
      return { ok: true };
    },
  }),
  defineCommand({
    name: 'postback log',
    usage: 'postback log --app-key K [--partner P] [--limit N]   (delivery attempts, newest first)',
    flags: z.object({ 'app-key': key, partner: partner.optional(), limit: z.coerce.number().int().min(1).max(1000).optional() }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const attempts = await new PostbackRecords(resourceName.table('postbacks')).attempts(app.app_id, {
        partner: f.partner,
        limit: f.limit,
      });
      return { app_id: app.app_id, attempts: attempts.map(({ app_id: _app, ...attempt }) => attempt) };
    },
  }),
  defineCommand({
    name: 'postback withheld',
    usage:
      'postback withheld --app-key K [--partner P] [--days N] [--limit N]\n' +
      '             (postbacks withheld for consent in the last N days, 7 unless said, at most 30:\n' +
      '              counts per partner and reason, and the newest N of them, 100 unless said)',
    flags: z.object({
      'app-key': key,
      partner: partner.optional(),
      days: z.coerce.number().int().min(1).max(MAX_WITHHELD_DAYS).optional(),
      limit: z.coerce.number().int().min(1).max(MAX_WITHHELD_LISTED).optional(),
    }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      const untilMs = Date.now() + 1;
      const sinceMs = untilMs - (f.days ?? DEFAULT_WITHHELD_DAYS) * 86_400_000;
      const attempts = await new PostbackRecords(resourceName.table('postbacks')).attemptsBetween(app.app_id, sinceMs, untilMs, 'withheld');
      return {
        app_id: app.app_id,
        ...withheldForConsent(attempts, { sinceMs, untilMs, partner: f.partner, limit: f.limit ?? DEFAULT_WITHHELD_LISTED }),
      };
    },
  }),
];
