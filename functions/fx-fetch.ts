import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { FxStore } from './adapters/fx-store';
import { type FetchedRates, fetchRates } from './domain/fx/fetch-rates';
import { resourceName } from './shared/config';
import { errorFields, logger, metrics } from './shared/observability';

const store = new FxStore(resourceName.table('fx_rates'));
/**
 * Where the rates come from: the stack sets the ECB's daily file (lib/manifest.ts). Locally it is
 * '' (the runtime never reaches the internet) and the run only says so; `admin fx set` sets rates.
 */
const sourceUrl = process.env.FX_SOURCE_URL ?? '';
/** The ECB answers in well under a second; the function's own timeout is 30 s. */
const FETCH_TIMEOUT_MS = 10_000;

async function download(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/xml, text/xml' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.text();
}

/**
 * Daily (lib/manifest.ts, schedules): the reference rates of the day, stored as US dollars per
 * unit. A failure is the FxFetchFailed metric and an error log, then thrown, so the function's
 * Errors alarm fires: ingest rejects revenue in a currency with no rate for 7 days (bad_currency).
 */
export async function fxFetch(): Promise<FetchedRates | { readonly skipped: 'no FX_SOURCE_URL' }> {
  if (sourceUrl === '') {
    logger.info('no FX_SOURCE_URL: no rates fetched (set them with admin fx set)');
    return { skipped: 'no FX_SOURCE_URL' };
  }
  try {
    const fetched = await fetchRates({
      source: () => download(sourceUrl),
      rates: { putRates: (day, rates) => store.putRates(day, rates, sourceUrl) },
    });
    metrics.addMetric('FxDaysStored', MetricUnit.Count, fetched.days.length);
    logger.info('exchange rates stored', { days: fetched.days, currencies: fetched.currencies });
    return fetched;
  } catch (error) {
    metrics.addMetric('FxFetchFailed', MetricUnit.Count, 1);
    logger.error('exchange rates not fetched', { source: sourceUrl, error: errorFields(error) });
    throw error;
  }
}

export const handler = middy(fxFetch).use(injectLambdaContext(logger)).use(logMetrics(metrics));
