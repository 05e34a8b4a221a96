import { reportEndpoint } from './shared/report-endpoint';

/** GET /api/v1/reports/revenue (functions/domain/reports/answer-report.ts has the rules). */
export const { handle: reportRevenue, handler } = reportEndpoint('revenue');
