// Issue 40, item 5: the stream (and so the export's events and installs tables) shows each
// install's consent state: on every line, the install's latest consent the service knew when it
// counted the event, the later of the one its partition kept and the latest its own object carries.

import type { AggregationPorts } from '../../../functions/domain/aggregation/aggregate';
import { installPk } from '../../../functions/domain/aggregation/install-state';
import { CONSENT_SK, type ConsentRecord, isLater } from '../../../functions/domain/privacy/consent';
import { eventRow, installRow } from '../../../functions/domain/raw-data/export-rows';
import { APP, T0, world } from '../aggregation/world';

const MINUTE = 60_000;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The world with a consent port that keeps each install's latest in its partition, as ConsentStore does; and each call it got. */
function consentWorld() {
  const w = world();
  const calls: Map<string, ConsentRecord>[] = [];
  const ports: AggregationPorts = {
    ...w.ports,
    consents: async (appId, latest) => {
      calls.push(new Map(latest));
      for (const [installUuid, record] of latest) {
        const pk = installPk(appId, installUuid);
        const partition = w.installs.items.get(pk) ?? new Map<string, Record<string, unknown>>();
        const before = partition.get(CONSENT_SK) as ConsentRecord | undefined;
        if (!before || isLater(record, before)) partition.set(CONSENT_SK, { pk, sk: CONSENT_SK, ...record });
        w.installs.items.set(pk, partition);
      }
    },
  };
  const deliver = (bodies: readonly string[]) => w.deliver(bodies, ports);
  const consentOf = (eventId: string) => w.streamEvents().find((event) => event.event_id === eventId)?.consent;
  return { ...w, deliver, calls, consentOf };
}

const refused = { gdpr_applies: false, third_party_sharing: false, measurement: true };
const granted = { gdpr_applies: true, tcf_string: 'CQabc.YAAA', ad_user_data: true, ad_personalization: false };

describe("the stream's consent", () => {
  it("is the install's latest known when each event is counted: its object's, then the kept one, never an older one", async () => {
    const w = consentWorld();
    await w.deliver([
      w.upload([
        { event_id: 'i-1', event_name: 'install', install_uuid: uuid(1), ts_ms: T0, platform: 'ios' },
        { event_id: 'p-1', event_name: 'level', install_uuid: uuid(1), ts_ms: T0 + MINUTE, consent: refused },
        { event_id: 'i-2', event_name: 'install', install_uuid: uuid(2), ts_ms: T0, platform: 'android' },
      ]),
    ]);
    const said = { ts_ms: T0 + MINUTE, event_id: 'p-1' };
    const refusedState = {
      gdpr_applies: false,
      tcf_string: null,
      ad_user_data: null,
      ad_personalization: null,
      third_party_sharing: false,
      measurement: true,
      ...said,
    };
    // Both lines of the object show the consent it carries (the install's line too: it is what was known when counted).
    expect(w.consentOf('i-1')).toEqual(refusedState);
    expect(w.consentOf('p-1')).toEqual(refusedState);
    // An install that never said anything has none.
    expect(w.consentOf('i-2')).toBeNull();

    w.clock.now += 10 * MINUTE;
    await w.deliver([w.upload([{ event_id: 'e-2', event_name: 'level', install_uuid: uuid(1), ts_ms: T0 + 5 * MINUTE }])]);
    // A later object without consent: the kept one.
    expect(w.consentOf('e-2')).toEqual(refusedState);

    w.clock.now += 10 * MINUTE;
    await w.deliver([
      w.upload([
        // Sent late: its consent is older than the kept one, which stays.
        { event_id: 'e-3', event_name: 'level', install_uuid: uuid(1), ts_ms: T0 + 30 * 1000, consent: granted },
      ]),
    ]);
    expect(w.consentOf('e-3')).toEqual(refusedState);

    w.clock.now += 10 * MINUTE;
    await w.deliver([
      w.upload([{ event_id: 'e-4', event_name: 'level', install_uuid: uuid(1), ts_ms: T0 + 20 * MINUTE, consent: granted }]),
    ]);
    expect(w.consentOf('e-4')).toEqual({
      gdpr_applies: true,
      tcf_string: 'CQabc.YAAA',
      ad_user_data: true,
      ad_personalization: false,
      third_party_sharing: null,
      measurement: null,
      ts_ms: T0 + 20 * MINUTE,
      event_id: 'e-4',
    });
    // Lines are written once: the earlier ones keep what was known then.
    expect(w.consentOf('e-2')).toEqual(refusedState);

    // The export's rows carry the line's consent.
    const lines = w.stream.lines();
    const installLine = lines.find((line) => line.event.event_id === 'i-1');
    expect(installLine && installRow(installLine)).toMatchObject({ consent_third_party_sharing: false, consent_ts: T0 + MINUTE });
    const last = lines.find((line) => line.event.event_id === 'e-4');
    expect(last && eventRow(last)).toMatchObject({ consent_gdpr_applies: true, consent_tcf_string: 'CQabc.YAAA', consent_event_id: 'e-4' });
  });

  it('is kept once per install and object, however many of its events carry it', async () => {
    const w = consentWorld();
    await w.deliver([
      w.upload([
        { event_id: 'i-1', event_name: 'install', install_uuid: uuid(1), ts_ms: T0, consent: refused },
        ...[1, 2, 3].map((n) => ({ event_id: `e-${n}`, event_name: 'level', install_uuid: uuid(1), ts_ms: T0 + n, consent: granted })),
        { event_id: 'i-2', event_name: 'install', install_uuid: uuid(2), ts_ms: T0, consent: refused },
        { event_id: 'e-9', event_name: 'level', install_uuid: uuid(2), ts_ms: T0 + 9, consent: refused },
      ]),
    ]);
    expect(w.calls).toHaveLength(1);
    expect(Object.fromEntries([...(w.calls[0] ?? [])].map(([install, record]) => [install, record.event_id]))).toEqual({
      [uuid(1)]: 'e-3',
      [uuid(2)]: 'e-9',
    });
    expect(w.installs.items.get(installPk(APP, uuid(1)))?.get(CONSENT_SK)).toMatchObject({ event_id: 'e-3', ts_ms: T0 + 3 });
  });
});
