import type { AggregationMessage, AuditLine } from '../audit/types';
import type { MessageSink } from '../common/message-sink';
import { pool } from '../common/pool';
import { ADSERVICES_OUTCOMES, type AdServicesAnswer, type AdServicesAnswers, type AdServicesOutcome } from './answers';
import { tokensOf } from './token';

/**
 * The enrichment step (docs/ios.md, section 4): one message of the `enrichment` queue, an audit
 * object whose install lines carry AdServices tokens. Apple's answers are stored once beside the
 * object before the message goes on to aggregation, so the aggregator reads facts that never
 * change (exactly once holds as for any other object), and a redelivery, finding them, calls
 * Apple no more. Other objects never come this way and never wait for Apple.
 */

export interface EnrichPorts {
  /** The object's lines; AuditObjectError when missing or unreadable (the message is poison). */
  lines(auditKey: string): Promise<readonly AuditLine[]>;
  readonly answers: AnswersStore;
  /** One token exchanged, retries included (exchange.ts). */
  exchange(token: string): Promise<AdServicesAnswer>;
  readonly aggregation: MessageSink<AggregationMessage>;
}

/** The answers objects (functions/adapters/adservices-answers.ts). */
export interface AnswersStore {
  get(auditKey: string): Promise<AdServicesAnswers | undefined>;
  /** Writes the answers unless some are stored already, and returns those stored (the first write stands). */
  putOnce(auditKey: string, answers: AdServicesAnswers): Promise<AdServicesAnswers>;
}

export interface Enriched {
  /** Tokens exchanged with Apple by this delivery: 0 when an earlier one stored the answers. */
  readonly exchanged: number;
  readonly outcomes: Record<AdServicesOutcome, number>;
}

/** Tokens exchanged at once: each may wait out Apple's retries, so they go side by side. */
const EXCHANGE_CONCURRENCY = 16;

export async function enrich(ports: EnrichPorts, message: AggregationMessage): Promise<Enriched> {
  let answers = await ports.answers.get(message.audit_key);
  let exchanged = 0;
  if (answers === undefined) {
    const tokens = tokensOf(await ports.lines(message.audit_key));
    const found: (AdServicesAnswer & { index: number })[] = [];
    await pool(tokens, EXCHANGE_CONCURRENCY, async ({ index, token }) => {
      found.push({ index, ...(await ports.exchange(token)) });
    });
    exchanged = tokens.length;
    found.sort((a, b) => a.index - b.index);
    answers = await ports.answers.putOnce(message.audit_key, { version: 1, answers: found });
  }
  await ports.aggregation.send({ ...message, enriched: true });
  const outcomes = Object.fromEntries(ADSERVICES_OUTCOMES.map((outcome) => [outcome, 0])) as Record<AdServicesOutcome, number>;
  for (const answer of answers.answers) outcomes[answer.outcome]++;
  return { exchanged, outcomes };
}
