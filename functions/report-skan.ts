import { SkanReportStore } from './adapters/skan-report-store';
import { answerSkan, type SkanReportPorts } from './domain/skan/skan-report';
import { resourceName } from './shared/config';
import { reportHttpEndpoint } from './shared/report-endpoint';
import { serverKeys } from './shared/server-keys';

const ports: SkanReportPorts = {
  keys: serverKeys(),
  rows: new SkanReportStore(resourceName.table('aggregates')),
  nowMs: Date.now,
};

/**
 * GET /api/v1/reports/skan (functions/domain/skan/skan-report.ts has the rules; docs/ios.md
 * section 3), on the four reports' HTTP edge: the same caching, 304 and 503 store_unavailable.
 */
export const { handle: reportSkan, handler } = reportHttpEndpoint('skan', (request) => answerSkan(ports, request));
