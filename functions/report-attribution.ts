import { reportEndpoint } from './shared/report-endpoint';

/** GET /api/v1/reports/attribution (functions/domain/reports/answer-report.ts has the rules). */
export const { handle: reportAttribution, handler } = reportEndpoint('attribution');
