import { reportEndpoint } from './shared/report-endpoint';

/** GET /api/v1/reports/cohorts (functions/domain/reports/answer-report.ts has the rules). */
export const { handle: reportCohorts, handler } = reportEndpoint('cohorts');
