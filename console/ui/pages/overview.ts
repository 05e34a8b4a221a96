import './overview.css';
import type { ChartConfiguration, TooltipItem } from 'chart.js';
import { type ChartSpec, draw } from '../charts';
import { seriesFill } from '../colors';
import { h, loadInto, notice, replace, table } from '../dom';
import { count, orBlank, pct, usd } from '../format';
import {
  type ApiRow,
  type InstallsByDay,
  installsByDay,
  lastFinalWeek,
  latestFinalWindow,
  type OverviewFigure,
  overviewFigures,
  type PeriodData,
  type RankedRow,
  type Ranking,
  topRows,
} from '../overview-figures';
import { describePeriod, type Period, previousPeriod } from '../period';
import { type GroupColumn, readAll } from '../report-data';
import { selection } from '../state';
import { hrefFor } from '../view';

/**
 * The landing page (docs/console-analytics.md, "Overview"): the period's figures against the
 * previous period's, installs per day by partner, the top partners and campaigns, and links to
 * what a marketer asks next. The arithmetic is overview-figures.ts's; this file reads and draws.
 */
export async function overviewPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Overview'), notice('info', 'Select an app first (Companies and apps).'));
  const period = selection.period();
  const previous = previousPeriod(period);
  const nowMs = Date.now();
  const data = h('div', { class: 'overview-data', 'data-testid': 'overview-data' });
  replace(
    root,
    h('h1', { tabindex: -1 }, `Overview: ${app.name}`),
    h(
      'p',
      { class: 'overview-period', 'data-testid': 'overview-period' },
      describePeriod(period),
      h('span', { class: 'muted' }, ` · compared with ${previous.since} – ${previous.until}`),
    ),
    nextQuestions(lastFinalWeek(period.timeZone, nowMs)),
    data,
  );
  let chart: { canvas: HTMLCanvasElement; spec: ChartSpec } | undefined;
  const shown = await loadInto(data, async () => {
    const read = (p: Period, groupBy: readonly GroupColumn[]) => readAll('performance', { appKey: app.app_key, period: p, groupBy });
    const latest = latestFinalWindow(period, nowMs);
    const [byPartner, byCampaign, byDay, revenue, byPartnerBefore, byDayBefore, revenueBefore, latestRows] = await Promise.all([
      read(period, ['partner']),
      read(period, ['partner', 'campaign']),
      read(period, ['day', 'partner']),
      readAll('revenue', { appKey: app.app_key, period }),
      read(previous, ['partner']),
      read(previous, ['day', 'partner']),
      readAll('revenue', { appKey: app.app_key, period: previous }),
      // The latest final days, for a cohort figure of which no day of the period is final yet.
      latest ? read(latest, ['day', 'partner']) : [],
    ]);
    const current: PeriodData = { performance: byPartner, byDay, revenue };
    const before: PeriodData = { performance: byPartnerBefore, byDay: byDayBefore, revenue: revenueBefore };
    const installs = installsByDay(byDay, period.days);
    const canvas = h('canvas', { 'data-testid': 'overview-chart' });
    chart = { canvas, spec: installsChart(installs, period) };
    return [
      figuresSection(overviewFigures(current, before, period, nowMs, latestRows)),
      chartSection(canvas, installs, chart.spec),
      topSection(byPartner, byCampaign),
    ];
  });
  if (shown && chart) draw(chart.canvas, chart.spec);
}

/**
 * The questions that follow the overview, one click each (the issue's "Done when"). "Last week"
 * for D7 is the latest Monday-to-Sunday week whose D7 is final (a calendar last week is not final
 * until its Sunday is 8 days old), named as such.
 */
function nextQuestions(week: Period): HTMLElement {
  const days = { period: 'custom', since: week.since, until: week.until };
  const named = `the week of ${week.since} (the latest with D7 final)`;
  const links: [string, string, string][] = [
    ['next-d7-retention', `D1, D7 retention and ROAS of ${named}, by partner`, hrefFor('cohorts', { ...days, split: 'partner' })],
    [
      'next-campaign-country',
      `Paid ROAS D7 and installs by campaign and country, ${named}`,
      hrefFor('breakdown', { ...days, group: 'campaign,country', sort: 'roas_d7:desc' }),
    ],
    ['next-links', 'Copy a partner-ready tracking link', hrefFor('links')],
  ];
  return h(
    'nav',
    { class: 'overview-next', 'aria-label': 'Next questions', 'data-testid': 'next-questions' },
    h(
      'ul',
      null,
      links.map(([testId, label, href]) => h('li', null, h('a', { href, 'data-testid': testId }, label))),
    ),
  );
}

function figuresSection(figures: readonly OverviewFigure[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'figures-h' },
    h('h2', { id: 'figures-h', class: 'visually-hidden' }, 'Figures'),
    h(
      'ul',
      { class: 'figures' },
      figures.map((figure) =>
        h(
          'li',
          {
            class: 'figure',
            title: figure.means,
            'data-testid': `figure-${figure.key}`,
            'data-final': figure.latestFinal || figure.finalDays ? 'false' : 'true',
          },
          h('span', { class: 'figure-label' }, figure.label),
          h('strong', { class: 'figure-value', 'data-testid': `figure-${figure.key}-value` }, figure.text),
          figureNote(figure),
          h(
            'span',
            { class: `figure-change ${figure.change.direction}` },
            h('span', { 'data-testid': `figure-${figure.key}-change` }, figure.change.text),
            h('span', { class: 'muted' }, ' vs previous period'),
          ),
        ),
      ),
    ),
  );
}

/** Why a cohort figure is blank, or over which days it is computed when the period is final only in part. */
function figureNote(figure: OverviewFigure): HTMLElement | null {
  const note = (text: string, title?: string) =>
    h('small', { class: 'figure-note', 'data-testid': `figure-${figure.key}-note`, ...(title && { title }) }, text);
  if (figure.latestFinal) {
    const { since, until, firstFinalOn } = figure.latestFinal;
    return note(
      `over ${since} – ${until}, the latest final days`,
      `no day of this period is final yet${firstFinalOn ? ` (the first is on ${firstFinalOn})` : ''}: shown over the latest days that are`,
    );
  }
  if (figure.finalDays) {
    const { final, of, allFinalOn } = figure.finalDays;
    return note(
      `${final} of ${of} days final`,
      `over the installs of the ${final} days whose cohort is final; every day is on ${allFinalOn}`,
    );
  }
  return null;
}

function installsChart(installs: InstallsByDay, period: Period): ChartSpec {
  const totals = installs.partners.map((partner) => `${partner} ${count(installs.totalOf(partner))}`);
  const config: ChartConfiguration<'bar'> = {
    type: 'bar',
    data: {
      labels: [...installs.days],
      datasets: installs.partners.map((partner) => ({
        label: partner,
        data: installs.days.map((day) => installs.installs(partner, day)),
        backgroundColor: seriesFill('partner', partner),
      })),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { stacked: true },
        y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'installs' } },
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (item: TooltipItem<'bar'>) => `${item.dataset.label}: ${count(Number(item.raw))}`,
            footer: (items: TooltipItem<'bar'>[]) => `Total: ${count(installs.dayTotal(String(items[0]?.label ?? '')))}`,
          },
        },
      },
    },
  };
  return {
    summary: `Installs per day by partner, stacked, ${period.since} to ${period.until}. Totals: ${totals.join(', ') || 'none'}; all partners ${count(installs.total)}.`,
    config: config as unknown as ChartConfiguration,
  };
}

function chartSection(canvas: HTMLCanvasElement, installs: InstallsByDay, spec: ChartSpec): HTMLElement {
  const columns = [
    { label: 'Day', cell: (day: string) => (day === '' ? h('strong', null, 'Total') : day) },
    ...installs.partners.map((partner) => ({
      label: partner,
      numeric: true,
      cell: (day: string) =>
        day === ''
          ? h('strong', { 'data-testid': `installs-total-${partner}` }, count(installs.totalOf(partner)))
          : count(installs.installs(partner, day)),
    })),
    {
      label: 'All partners',
      numeric: true,
      cell: (day: string) =>
        day === '' ? h('strong', { 'data-testid': 'installs-total' }, count(installs.total)) : count(installs.dayTotal(day)),
    },
  ];
  return h(
    'section',
    { 'aria-labelledby': 'installs-h' },
    h('h2', { id: 'installs-h' }, 'Installs per day by partner'),
    h('p', { class: 'visually-hidden', 'data-testid': 'overview-chart-summary' }, spec.summary),
    installs.partners.length ? h('div', { class: 'chart' }, canvas) : null,
    h(
      'details',
      { class: 'chart-table' },
      h('summary', null, 'The numbers, day by day'),
      // The last row ('' as its day) is the period's total per partner.
      table('Installs per day by partner', columns, [...installs.days, ''], 'No installs in this period.'),
    ),
  );
}

interface TopTable {
  readonly testId: string;
  readonly title: string;
  readonly columns: readonly GroupColumn[];
  readonly ranking: Ranking;
}

const TOP_TABLES: readonly TopTable[] = [
  { testId: 'top-partners-installs', title: 'Top partners by installs', columns: ['partner'], ranking: 'installs' },
  { testId: 'top-partners-roas', title: 'Top partners by ROAS D7', columns: ['partner'], ranking: 'roas_d7' },
  { testId: 'top-campaigns-installs', title: 'Top campaigns by installs', columns: ['partner', 'campaign'], ranking: 'installs' },
  { testId: 'top-campaigns-roas', title: 'Top campaigns by ROAS D7', columns: ['partner', 'campaign'], ranking: 'roas_d7' },
];

/** A top row's link: the breakdown of a partner by campaign, or of a campaign by country. */
function breakdownLink(row: RankedRow): HTMLElement {
  const { partner = '', campaign } = row.group;
  return campaign === undefined
    ? h('a', { href: hrefFor('breakdown', { group: 'campaign', partner }) }, partner)
    : h('a', { href: hrefFor('breakdown', { group: 'campaign,country', partner, campaign }) }, `${campaign} (${partner})`);
}

function topSection(byPartner: readonly ApiRow[], byCampaign: readonly ApiRow[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'top-h' },
    h('h2', { id: 'top-h' }, 'Top partners and campaigns'),
    h(
      'div',
      { class: 'top-tables' },
      TOP_TABLES.map((spec) => {
        const rows = topRows(spec.columns.includes('campaign') ? byCampaign : byPartner, spec.columns, spec.ranking);
        const empty =
          spec.ranking === 'roas_d7'
            ? 'No ROAS D7 yet: it needs cost and a period whose installs are at least 8 days old.'
            : 'No attributed installs in this period.';
        return h(
          'div',
          { 'data-testid': spec.testId },
          h('h3', null, spec.title),
          table(
            spec.title,
            [
              { label: spec.columns.includes('campaign') ? 'Campaign (partner)' : 'Partner', cell: breakdownLink },
              { label: 'Installs', numeric: true, cell: (row: RankedRow) => count(row.installs) },
              { label: 'Cost', numeric: true, cell: (row: RankedRow) => usd(row.costUsd) },
              { label: 'ROAS D7', numeric: true, cell: (row: RankedRow) => orBlank(row.roasD7, pct) },
            ],
            rows,
            empty,
          ),
        );
      }),
    ),
  );
}
