import { reportEndpoint } from './shared/report-endpoint';

/** GET /api/v1/reports/events (functions/domain/reports/answer-report.ts has the rules). */
export const { handle: reportEvents, handler } = reportEndpoint('events');
