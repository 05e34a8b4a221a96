import type { AuditLine } from '../audit/types';
import { isPlainObject } from '../common/json';
import { INSTALL_EVENT, isAdServicesToken } from '../ingest/event-validation';
import { type AdServicesAnswers, answersByIndex } from './answers';

/** The AdServices token an install event carries, if any (docs/ios.md, section 4). */
export function adServicesTokenOf(event: unknown): string | undefined {
  if (!isPlainObject(event) || event.event_name !== INSTALL_EVENT || !isPlainObject(event.attribution)) return undefined;
  const token = event.attribution.adservices_token;
  return isAdServicesToken(token) ? token : undefined;
}

/** The accepted install lines of an audit object that carry a token, with their index. */
export function tokensOf(lines: readonly AuditLine[]): { readonly index: number; readonly token: string }[] {
  const tokens: { index: number; token: string }[] = [];
  for (const line of lines) {
    if (line.status !== 'accepted') continue;
    const token = adServicesTokenOf(line.event);
    if (token !== undefined) tokens.push({ index: line.index, token });
  }
  return tokens;
}

/**
 * The object's lines with Apple's answers joined (the aggregator's read of an enriched object): a
 * line whose token has no stored answer is decided without one, as `unavailable`.
 */
export function withAnswers(lines: readonly AuditLine[], answers: AdServicesAnswers): AuditLine[] {
  const byIndex = answersByIndex(answers);
  return lines.map((line) =>
    line.status === 'accepted' && adServicesTokenOf(line.event) !== undefined
      ? { ...line, adservices: byIndex.get(line.index) ?? { outcome: 'unavailable' } }
      : line,
  );
}
