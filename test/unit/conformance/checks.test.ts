// The kit's checks (conformance/checks.ts) on recorded requests built here: each rule fails on the
// request that breaks it and on nothing else, and every rule the kit checks is defined in
// docs/sdk-protocol.md at the level (MUST or SHOULD) the kit reports it.

import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type CheckInput, check } from '../../../conformance/checks';
import type { Exchange, Fault } from '../../../conformance/proxy';
import { CHECKED_RULES, SHOULD_RULES } from '../../../conformance/rules';

const KEYS = { companyKey: 'co_live_c', appKey: 'app_live_a', signingSecret: 's3cret' };
const INSTALL = randomUUID();

interface Sent {
  seqs: number[];
  ids?: string[];
  at: number;
  answeredAt?: number;
  sentAtMs?: number;
  heard?: number;
  retryAfterS?: number;
  fault?: Fault;
  gzip?: boolean;
  extra?: Record<string, unknown>;
  sign?: (body: Buffer) => string;
}

const idOf = (seq: number) => `id-${seq}`;

/** A POST /event exchange as the proxy records it, signed over its bytes unless `sign` says otherwise. */
function eventRequest(n: number, sent: Sent): Exchange {
  const events = sent.seqs.map((seq, i) => ({
    event_id: sent.ids?.[i] ?? idOf(seq),
    event_name: 'conformance_event',
    install_uuid: INSTALL,
    ts_ms: 1_000,
    properties: { seq },
    ...sent.extra,
  }));
  const json = Buffer.from(JSON.stringify({ events, sent_at_ms: sent.sentAtMs ?? sent.at }));
  const body = sent.gzip ? gzipSync(json) : json;
  const results = events.map((event) => ({ event_id: event.event_id, status: 'accepted' }));
  return {
    n,
    method: 'POST',
    path: '/event',
    headers: {
      'content-type': 'application/json',
      'x-service-company-key': KEYS.companyKey,
      'x-service-app-key': KEYS.appKey,
      'x-service-signature': sent.sign ? sent.sign(body) : createHmac('sha256', KEYS.signingSecret).update(body).digest('hex'),
      'x-service-sdk': 'test/1',
      ...(sent.gzip && { 'content-encoding': 'gzip' }),
    },
    body,
    receivedMs: sent.at,
    answeredMs: sent.answeredAt ?? sent.at + 10,
    fault: sent.fault ?? { kind: 'pass' },
    heardStatus: sent.heard ?? 200,
    ...(sent.retryAfterS !== undefined && { retryAfterS: sent.retryAfterS }),
    ...((sent.heard ?? 200) === 200 && { runtime: { status: 200, text: JSON.stringify({ results }) } }),
  };
}

function findings(sent: Sent[], more: Partial<CheckInput> = {}) {
  const events = new Set(sent.flatMap((s) => s.seqs)).size;
  return check({
    exchanges: sent.map((s, i) => eventRequest(i + 1, s)),
    marks: [],
    ...KEYS,
    events,
    requireConsent: false,
    delivers: true,
    countedByRuntime: events,
    ...more,
  }).map((finding) => [finding.rule, finding.request?.split(' ')[0]]);
}

describe('the conformance checks', () => {
  it('find nothing in a conforming exchange: a 503, then the retry restamped and signed anew', () => {
    expect(
      findings([
        { seqs: [0, 1], at: 1_000, heard: 503 },
        { seqs: [0, 1], at: 1_200 },
      ]),
    ).toEqual([]);
  });

  it('fail P-SIGN-1 on a signature over the JSON of a gzipped body', () => {
    const seqs = [...Array(10).keys()];
    const sign = () => createHmac('sha256', KEYS.signingSecret).update(JSON.stringify({ seqs })).digest('hex');
    expect(findings([{ seqs, at: 1_000, gzip: true, sign }])).toEqual([['P-SIGN-1', '#1']]);
  });

  it('fail P-ID-1 on a retry that renames an event, and P-ONCE-1 on the event accepted twice', () => {
    expect(
      findings([
        { seqs: [0], at: 1_000, heard: 503 },
        { seqs: [0], ids: ['other'], at: 1_100 },
      ]),
    ).toEqual([['P-ID-1', '#2']]);
    expect(
      findings(
        [
          { seqs: [0], at: 1_000 },
          { seqs: [0], ids: ['other'], at: 1_100 },
        ],
        { countedByRuntime: 2 },
      ),
    ).toEqual([
      ['P-ID-1', '#2'],
      ['P-ONCE-1', '#2'],
      ['P-ONCE-1', undefined],
    ]);
  });

  it('fail P-BACKOFF-2 on a retry before Retry-After ended, and not on one after it', () => {
    const asked = { seqs: [0], at: 1_000, answeredAt: 1_000, heard: 429, retryAfterS: 1 };
    expect(findings([asked, { seqs: [0], at: 1_500 }])).toEqual([['P-BACKOFF-2', '#2']]);
    expect(findings([asked, { seqs: [0], at: 2_000 }])).toEqual([]);
  });

  it('fail P-BACKOFF-1 on five retries in a row each at once after the failure', () => {
    const loop = [0, 1, 2, 3, 4, 5].map((i) => ({ seqs: [0], at: 1_000 + i * 2, answeredAt: 1_000 + i * 2, heard: 503 }));
    expect(findings([...loop, { seqs: [0], at: 5_000 }])).toEqual([['P-BACKOFF-1', '#6']]);
  });

  it('fail P-AUTH-1 on a batch sent after a 401, P-CONSENT-1 on one sent before consent, P-PRIV-1 on an IDFA', () => {
    const refused = [
      { seqs: [0], at: 1_000, heard: 401 },
      { seqs: [0], at: 3_000, heard: 401 },
    ];
    expect(findings(refused, { delivers: false })).toEqual([['P-AUTH-1', '#2']]);
    expect(findings([{ seqs: [0], at: 1_000 }], { requireConsent: true, marks: [{ name: 'consent', ms: 1_500 }] })).toEqual([
      ['P-CONSENT-1', '#1'],
    ]);
    expect(findings([{ seqs: [0], at: 1_000, extra: { idfa: 'ABCD' } }])).toEqual([['P-PRIV-1', '#1']]);
  });

  it('fail P-ONCE-1 on an event never accepted, and on a runtime count that differs', () => {
    expect(findings([{ seqs: [0], at: 1_000 }], { events: 2, countedByRuntime: 1 })).toEqual([
      ['P-ONCE-1', undefined],
      ['P-ONCE-1', undefined],
    ]);
  });
});

describe('docs/sdk-protocol.md', () => {
  const protocol = readFileSync(join(__dirname, '../../../docs/sdk-protocol.md'), 'utf8');

  it.each(Object.keys(CHECKED_RULES))('defines %s at the level the kit reports it, and its check in the kit table', (rule) => {
    const definition = new RegExp(`^- \\*\\*${rule}\\*\\* ([^]*?)(?=\\n- \\*\\*|\\n\\n)`, 'm').exec(protocol)?.[1] ?? '';
    expect(definition).not.toBe('');
    expect(/\bMUST\b/.test(definition)).toBe(!SHOULD_RULES.has(rule));
    expect(protocol).toContain(`| ${rule} |`);
  });
});
