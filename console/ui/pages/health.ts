import './health.css';
import { command } from '../api';
import { type Child, dateTime, h, notice, replace, table } from '../dom';
import { plainError } from '../errors';
import { count, pct } from '../format';

/** The answer of `admin health` (functions/domain/health/operator-health.ts, OperatorHealth). */
type Part<T> = T | { error: string };
interface HealthView {
  status: 'ok' | 'broken';
  problems: string[];
  checked_at: string;
  environment: 'local' | 'aws';
  ingestion: Part<{
    window_hours: number;
    hours: { hour: string; accepted: number; rejected: number; rejected_by_reason: Record<string, number> }[];
  }>;
  aggregation: Part<{ oldest_message_age_seconds: number | null; messages: number; in_flight: number; alarm_after_seconds: number | null }>;
  dead_letter_queues: Part<{ queue: string; messages: number }[]>;
  postbacks: Part<{
    window_hours: number;
    partners: { partner: string; attempts: number; failed: number; failure_rate: number }[];
    truncated: boolean;
  }>;
  probe: Part<{ status: string; bindings: Record<string, string> }>;
  alarms: Part<{ source: 'cloudwatch' | 'none'; alarms: { name: string; state: string; reason: string; updated_at: string | null }[] }>;
}

/** How often the page reads the view again while it is shown (issue 42: a fault shows within a minute). */
export const HEALTH_REFRESH_MS = 30_000;

/** The operators' health view (`admin health`), read again every 30 s while the page is open. */
export async function healthPage(root: HTMLElement): Promise<void> {
  const body = h('div', { 'data-testid': 'health-view', 'aria-live': 'polite' });
  replace(
    root,
    h('h1', { tabindex: -1 }, 'Health'),
    h('p', null, `Is anything broken? Read again every ${HEALTH_REFRESH_MS / 1000} s while this page is open (admin health).`),
    body,
  );
  const load = async () => {
    try {
      replace(body, view(await command<HealthView>('health')));
    } catch (error) {
      replace(body, verdict('broken', [`The health view could not be read: ${plainError(error)}`], undefined));
    }
  };
  await load();
  // The page's element leaves the document when another page is drawn: the timer stops with it.
  const timer = setInterval(() => {
    if (root.isConnected) void load();
    else clearInterval(timer);
  }, HEALTH_REFRESH_MS);
}

function verdict(status: 'ok' | 'broken', problems: string[], checkedAt: string | undefined): HTMLElement {
  const when = checkedAt ? ` (checked ${dateTime(Date.parse(checkedAt))})` : '';
  return h(
    'div',
    {
      class: `notice ${status === 'ok' ? 'success' : 'error'} health-verdict`,
      role: status === 'ok' ? 'status' : 'alert',
      'data-testid': 'health-verdict',
      'data-status': status,
    },
    status === 'ok' ? `Nothing is broken${when}.` : `Something is broken${when}:`,
    problems.length
      ? h(
          'ul',
          null,
          problems.map((problem) => h('li', null, problem)),
        )
      : null,
  );
}

/** A part that could not be read says so where its figures would be. */
const section = <T>(title: string, part: Part<T>, draw: (value: T) => Child): HTMLElement =>
  h(
    'section',
    { 'data-testid': `health-${title.toLowerCase().replace(/[^a-z]+/g, '-')}` },
    h('h2', null, title),
    typeof part === 'object' && part !== null && 'error' in part ? notice('error', `Could not be read: ${part.error}`) : draw(part as T),
  );

function view(health: HealthView): HTMLElement {
  return h(
    'div',
    null,
    verdict(health.status, health.problems, health.checked_at),
    h(
      'div',
      { class: 'health-parts' },
      section('Health probe', health.probe, (probe) =>
        table(
          'Bindings of GET /health',
          [
            { label: 'Binding', cell: ([binding]) => binding },
            { label: 'State', cell: ([, state]) => state },
          ],
          Object.entries(probe.bindings),
        ),
      ),
      section('Aggregation lag', health.aggregation, (a) =>
        h(
          'p',
          null,
          a.oldest_message_age_seconds === null
            ? 'Oldest message: no figure yet'
            : `Oldest message: ${count(a.oldest_message_age_seconds)} s`,
          a.alarm_after_seconds === null ? '' : ` (alarm after ${count(a.alarm_after_seconds)} s)`,
          `; ${count(a.messages)} waiting, ${count(a.in_flight)} in flight.`,
        ),
      ),
      section('Dead-letter queues', health.dead_letter_queues, (dlqs) =>
        table(
          'Messages in each dead-letter queue',
          [
            { label: 'Queue', cell: (q) => q.queue },
            { label: 'Messages', cell: (q) => count(q.messages), numeric: true },
          ],
          dlqs,
        ),
      ),
      section('Alarms', health.alarms, (alarms) =>
        alarms.source === 'none'
          ? h('p', null, 'The local runtime has no CloudWatch alarms; the verdict above checks what they watch.')
          : table(
              'The stack’s alarms',
              [
                { label: 'Alarm', cell: (a) => a.name },
                { label: 'State', cell: (a) => a.state },
                { label: 'Since', cell: (a) => (a.updated_at ? dateTime(Date.parse(a.updated_at)) : '') },
              ],
              alarms.alarms,
              'The stack has no alarms.',
            ),
      ),
    ),
    section('Ingestion', health.ingestion, (ingestion) =>
      table(
        `Events per hour, the last ${ingestion.window_hours} hours`,
        [
          { label: 'Hour (UTC)', cell: (row) => row.hour.replace('T', ' ').replace('Z', '') },
          { label: 'Accepted', cell: (row) => count(row.accepted), numeric: true },
          { label: 'Rejected', cell: (row) => count(row.rejected), numeric: true },
          {
            label: 'Rejected by reason',
            cell: (row) =>
              Object.entries(row.rejected_by_reason)
                .map(([reason, n]) => `${reason} ${count(n)}`)
                .join(', '),
          },
        ],
        ingestion.hours.filter((row) => row.accepted + row.rejected > 0).reverse(),
        `No events in the last ${ingestion.window_hours} hours.`,
      ),
    ),
    section('Postbacks', health.postbacks, (postbacks) =>
      h(
        'div',
        null,
        table(
          `Delivery attempts by partner, the last ${postbacks.window_hours} hours`,
          [
            { label: 'Partner', cell: (p) => p.partner },
            { label: 'Attempts', cell: (p) => count(p.attempts), numeric: true },
            { label: 'Failed', cell: (p) => count(p.failed), numeric: true },
            { label: 'Failure rate', cell: (p) => pct(p.failure_rate), numeric: true },
          ],
          postbacks.partners,
          `No postback attempts in the last ${postbacks.window_hours} hours.`,
        ),
        postbacks.truncated ? notice('info', 'An app had more attempts than the view reads: its newest are counted.') : null,
      ),
    ),
  );
}
