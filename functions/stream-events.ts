import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { LedgerLaneReader, StreamReader } from './adapters/stream-reader';
import { ServiceError } from './domain/common/errors';
import { answerStream, type StreamPorts, streamError } from './domain/raw-data/stream';
import { resourceName } from './shared/config';
import { type HttpEvent, type HttpResult, header, httpHandler, json } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';
import { serverKeys } from './shared/server-keys';

const ports: StreamPorts = {
  // The reports' key look-up, cache included: the same 401s, and a revoked key stops within 30 s.
  keys: serverKeys(),
  lanes: new LedgerLaneReader(resourceName.table('ledger')),
  objects: new StreamReader(resourceName.exportBucket()),
  nowMs: Date.now,
};

/**
 * A page with has_more false is a snapshot of the end of the stream: asked again with the same
 * cursor a moment later it holds more. Nothing may keep it.
 */
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * GET /api/v1/stream/events (functions/domain/raw-data/stream.ts has the rules; docs/raw-data.md,
 * "The event stream"). A store that fails is a 503 store_unavailable, as for the reports, never a
 * 500: nothing was changed, and the client's retry with the same cursor is safe.
 */
export async function streamEvents(event: HttpEvent): Promise<HttpResult> {
  const startedMs = Date.now();
  try {
    const page = await answerStream(ports, {
      authorization: header(event, 'authorization'),
      params: event.queryStringParameters ?? {},
    });
    metrics.addMetric('StreamEventsServed', MetricUnit.Count, page.events.length);
    return json(200, page, NO_STORE);
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    logger.error('stream page not answered: a store failed', { error: errorFields(error) });
    throw streamError('store_unavailable');
  } finally {
    metrics.addMetric('StreamLatency', MetricUnit.Milliseconds, Date.now() - startedMs);
  }
}

export const handler = httpHandler(streamEvents);
