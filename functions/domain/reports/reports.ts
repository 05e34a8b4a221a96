/** The four reports of the Reporting API, in the order the interface lists them. */
export const REPORT_NAMES = ['attribution', 'revenue', 'cohorts', 'events'] as const;
export type ReportName = (typeof REPORT_NAMES)[number];
export const REPORTS_PREFIX = '/api/v1/reports';

export function isReportName(name: string): name is ReportName {
  return (REPORT_NAMES as readonly string[]).includes(name);
}
