/** The four reports of the Reporting API, in the order the interface lists them. */
export const REPORT_NAMES = ['attribution', 'revenue', 'cohorts', 'events'] as const;
export type ReportName = (typeof REPORT_NAMES)[number];
export const REPORTS_PREFIX = '/api/v1/reports';

/** Every report path under the prefix: the four above and those beside them (issue 23: performance; issue 24: skan). */
export const REPORT_ROUTES = [...REPORT_NAMES, 'performance', 'skan'] as const;

/** Whether a name under the prefix is a report's (its other methods are 405, not 404). */
export function isReportRoute(name: string): boolean {
  return (REPORT_ROUTES as readonly string[]).includes(name);
}

export function isReportName(name: string): name is ReportName {
  return (REPORT_NAMES as readonly string[]).includes(name);
}
