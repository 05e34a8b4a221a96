import type { Exchange, Fault } from './proxy';
import type { RuleId } from './rules';

/** What a harness must be able to do for a scenario beyond tracking and restarting. */
export type Capability = 'consent' | 'abort';

export interface Scenario {
  readonly name: string;
  /** What the SDK meets, printed for an external SDK's author. */
  readonly description: string;
  readonly events: number;
  readonly restarts: number;
  readonly requireConsent: boolean;
  /** false: the SDK cannot deliver its events (its secret expires); the scenario ends when it has stopped. */
  readonly delivers: boolean;
  readonly needs: readonly Capability[];
  /** The fault for a request; `eventAttempt` counts POST /event requests from 1 (0 for any other). */
  fault(exchange: Exchange, eventAttempt: number): Fault;
}

const PASS: Fault = { kind: 'pass' };
const EVERY_SCENARIO: readonly RuleId[] = [
  'P-HDR-1',
  'P-SIGN-1',
  'P-BATCH-1',
  'P-GZIP-1',
  'P-ID-1',
  'P-STAMP-1',
  'P-SEND-1',
  'P-BACKOFF-1',
  'P-BACKOFF-2',
  'P-FIRST-1',
  'P-PRIV-1',
];

/** The rules a scenario's report lists (each passes or names its offending requests). */
export function rulesOf(scenario: Scenario): RuleId[] {
  return [
    ...EVERY_SCENARIO,
    ...(scenario.requireConsent ? (['P-CONSENT-1'] as const) : []),
    ...(scenario.delivers ? (['P-ONCE-1'] as const) : (['P-AUTH-1'] as const)),
  ];
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'baseline',
    description: 'No faults: every request reaches the service and is answered.',
    events: 25,
    restarts: 0,
    requireConsent: false,
    delivers: true,
    needs: [],
    fault: () => PASS,
  },
  {
    name: 'unavailable',
    description:
      'Event requests in turn: 503 store_unavailable without Retry-After, answered 400 ms late, the service takes the batch ' +
      'and the connection drops before the answer, the connection drops before the service sees it, then passed; ' +
      'the first-launch call is answered 400 ms late.',
    events: 30,
    restarts: 0,
    requireConsent: false,
    delivers: true,
    needs: [],
    fault: (exchange, attempt) => {
      if (attempt === 0) return exchange.path === '/sdk/v1/attribution' ? { kind: 'slow', ms: 400 } : PASS;
      const faults: Fault[] = [
        { kind: 'answer', status: 503, error: 'store_unavailable' },
        { kind: 'slow', ms: 400 },
        { kind: 'drop-after' },
        { kind: 'drop-before' },
        PASS,
      ];
      return faults[(attempt - 1) % faults.length] ?? PASS;
    },
  },
  {
    name: 'throttled',
    description: 'The first event request is answered 429 with Retry-After: 1, the third 503 with Retry-After: 1; the rest pass.',
    events: 20,
    restarts: 0,
    requireConsent: false,
    delivers: true,
    needs: [],
    fault: (_exchange, attempt) => {
      if (attempt === 1) return { kind: 'answer', status: 429, error: 'cap_exceeded', retryAfterS: 1 };
      if (attempt === 3) return { kind: 'answer', status: 503, error: 'store_unavailable', retryAfterS: 1 };
      return PASS;
    },
  },
  {
    name: 'restarts',
    description:
      'The app is killed in the middle of a send and relaunched twice; every second event request is taken by the service ' +
      'and its answer lost.',
    events: 40,
    restarts: 2,
    requireConsent: false,
    delivers: true,
    needs: [],
    fault: (_exchange, attempt) => (attempt % 2 === 0 ? { kind: 'drop-after' } : PASS),
  },
  {
    name: 'consent',
    description: 'The app requires consent: it tracks its events, then gives consent (and marks it), then sends.',
    events: 12,
    restarts: 0,
    requireConsent: true,
    delivers: true,
    needs: ['consent'],
    fault: () => PASS,
  },
  {
    name: 'expired-secret',
    description: "After the first accepted event request, every one is answered 401 bad_signature, as after the app's secret expired.",
    events: 20,
    restarts: 0,
    requireConsent: false,
    delivers: false,
    needs: ['abort'],
    fault: (exchange, attempt) =>
      attempt > 1 && exchange.path === '/event' ? { kind: 'answer', status: 401, error: 'bad_signature' } : PASS,
  },
];

export function scenariosNamed(name: string): Scenario[] {
  if (name === 'all') return [...SCENARIOS];
  const found = SCENARIOS.filter((scenario) => scenario.name === name);
  if (found.length === 0) throw new Error(`no scenario ${name}: one of all, ${SCENARIOS.map((s) => s.name).join(', ')}`);
  return found;
}
