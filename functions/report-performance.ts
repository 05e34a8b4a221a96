import { PerformanceStore } from './adapters/performance-store';
import { answerPerformance, type PerformancePorts } from './domain/analytics/performance-report';
import { clickTables } from './shared/click-tables';
import { resourceName } from './shared/config';
import { reportHttpEndpoint } from './shared/report-endpoint';
import { serverKeys } from './shared/server-keys';

const ports: PerformancePorts = {
  keys: serverKeys(),
  rows: new PerformanceStore(resourceName.table('aggregates'), clickTables()),
  nowMs: Date.now,
};

/**
 * GET /api/v1/reports/performance (functions/domain/analytics/performance-report.ts has the
 * rules), on the four reports' HTTP edge: the same caching, 304 and 503 store_unavailable.
 */
export const { handle: reportPerformance, handler } = reportHttpEndpoint('performance', (request) => answerPerformance(ports, request));
