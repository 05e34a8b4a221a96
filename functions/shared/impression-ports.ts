import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { AuditStore } from '../adapters/audit-store';
import { CapCounter } from '../adapters/cap-counter';
import { CachedFxRates, FxStore } from '../adapters/fx-store';
import { MessageQueue } from '../adapters/message-queue';
import type { AggregationMessage } from '../domain/audit/types';
import type { TakeBatchPorts } from '../domain/ingest/take-batch';
import { resourceName } from './config';
import { errorFields, logger, metrics } from './observability';

/**
 * What taking a batch of server-side impressions needs (takeImpressions): POST /api/v1/ad-revenue
 * and the daily MAX pull take them alike, so they share these stores and grants (lib/manifest.ts).
 */
export function impressionPorts(): TakeBatchPorts {
  return {
    caps: new CapCounter(resourceName.table('counters'), resourceName.table('ledger')),
    audit: new AuditStore(resourceName.bucket()),
    aggregation: new MessageQueue<AggregationMessage>(resourceName.queueUrl('aggregation')),
    // An impression is never an install, so it never carries an Apple Ads token: nothing goes to enrichment.
    enrichment: {
      send: async () => {
        throw new Error('an ad impression never waits for Apple');
      },
    },
    rates: new CachedFxRates(new FxStore(resourceName.table('fx_rates'))),
    failed: (step, batch, error) => {
      if (step !== 'cap_mark') metrics.addMetric('AuditWriteFailed', MetricUnit.Count, 1);
      logger.error(step === 'cap_mark' ? 'impressions taken, their count not settled' : 'impressions not taken', {
        step,
        company_id: batch.companyId,
        app_id: batch.appId,
        error: errorFields(error),
      });
    },
  };
}
