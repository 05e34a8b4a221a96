import { TCModel, TCString } from '@iabtechlabtcf/core';
import type { EventClaim } from '../../../functions/domain/aggregation/install-state';
import type { ProbabilisticBasis } from '../../../functions/domain/privacy/probabilistic-basis';
import { vendorList } from '../../support/tcf';
import { APP, click, failingAfter, LEASE_MS, T0, withConsentStore, world } from './world';

// The app's basis of probabilistic matching, in the aggregator's install attribution
// (docs/privacy.md, "Probabilistic matching"): the partner an install goes to by address and
// platform, per basis and per consent the install carries.

const HOUR = 3_600_000;
const UUID = '00000000-0000-4000-8000-000000000001';
const install = (extra: object = {}) => ({
  event_id: 'i-1',
  event_name: 'install',
  install_uuid: UUID,
  ts_ms: T0,
  platform: 'ios',
  ...extra,
});

function tcString(purposes: readonly number[]): string {
  const model = new TCModel(vendorList());
  model.cmpId = 10;
  model.cmpVersion = 1;
  model.isServiceSpecific = true;
  model.purposeConsents.set([...purposes]);
  return TCString.encode(model);
}

const CONSENTS = {
  none: undefined,
  granted: { gdpr_applies: true, tcf_string: tcString([1, 7]) },
  'measurement false': { measurement: false },
  'TCF without purpose 7': { gdpr_applies: true, tcf_string: tcString([1]) },
} as const;
type ConsentState = keyof typeof CONSENTS;

/** A world whose app matches probabilistically under `basis`, with a click of the install's address and platform an hour before it. */
function basisWorld(basis: ProbabilisticBasis | undefined) {
  const w = world({ probabilistic: true, ...(basis ? { probabilisticBasis: basis } : {}) });
  w.clock.now = T0 + HOUR;
  w.clicks.set('c-1', click({ click_id: 'c-1', ts_ms: T0 - HOUR, partner: 'meta' }));
  const decision = () => w.installs.items.get(`${APP}#${UUID}`)?.get('e#i-1') as EventClaim | undefined;
  return { w, decision };
}

const withConsent = (state: ConsentState) => {
  const consent = CONSENTS[state];
  return install(consent ? { consent } : {});
};

describe('probabilistic matching by the app basis', () => {
  const expected: Record<ProbabilisticBasis, Record<ConsentState, string>> = {
    legitimate_interest: { none: 'meta', granted: 'meta', 'measurement false': 'organic', 'TCF without purpose 7': 'meta' },
    consent: { none: 'organic', granted: 'meta', 'measurement false': 'organic', 'TCF without purpose 7': 'organic' },
    off: { none: 'organic', granted: 'organic', 'measurement false': 'organic', 'TCF without purpose 7': 'organic' },
  };
  const cases = Object.entries(expected).flatMap(([basis, byState]) =>
    Object.entries(byState).map(([state, partner]) => [basis as ProbabilisticBasis, state as ConsentState, partner] as const),
  );

  it.each(cases)('under %s with consent %s, the install goes to %s', async (basis, state, partner) => {
    const { w, decision } = basisWorld(basis);
    await w.deliver([w.upload([withConsent(state)])]);
    expect(decision()?.decision?.partner).toBe(partner);
    expect(w.table().attribution[`2026-06-01|${partner}|${partner === 'organic' ? 'organic' : 'probabilistic'}`]).toMatchObject({
      installs: 1,
    });
  });

  it('keeps the matching of an app that never set a basis (legitimate_interest)', async () => {
    const { w, decision } = basisWorld(undefined);
    await w.deliver([w.upload([install()])]);
    expect(decision()?.decision).toMatchObject({ partner: 'meta', attribution_type: 'probabilistic' });
  });

  it('leaves deterministic matches alone: a click id in the referrer wins under off', async () => {
    const { w, decision } = basisWorld('off');
    w.clicks.set('c-2', click({ click_id: 'c-2', ts_ms: T0 - 2 * HOUR, partner: 'google' }));
    await w.deliver([w.upload([install({ attribution: { click_id: 'c-2' } })])]);
    expect(decision()?.decision).toMatchObject({ partner: 'google', attribution_type: 'deterministic' });
  });

  it('reads the install consent stored from an earlier object: a grant before the install is counted lets it match', async () => {
    const { w, decision } = basisWorld('consent');
    const ports = withConsentStore(w);
    const session = { event_id: 'e-0', event_name: 'session', install_uuid: UUID, ts_ms: T0 - 1_000, consent: CONSENTS.granted };
    await w.deliver([w.upload([session])], ports);
    await w.deliver([w.upload([install()])], ports);
    expect(decision()?.decision?.partner).toBe('meta');
  });

  it('decides once: a redelivery keeps the recorded decision though a refusal was stored in between', async () => {
    let checked = 0;
    for (let limit = 1; limit < 30; limit++) {
      const { w, decision } = basisWorld('consent');
      const ports = withConsentStore(w);
      const message = w.upload([withConsent('granted')]);
      const [first] = await w.deliver([message], failingAfter(ports, limit).ports);
      if (first?.kind === 'counted' || !decision()) continue;
      // A refusal stamped after the install, stored before the redelivery: deciding anew would make it organic.
      await w.deliver(
        [w.upload([{ event_id: 'e-1', event_name: 'session', install_uuid: UUID, ts_ms: T0 + 1_000, consent: { measurement: false } }])],
        ports,
      );
      w.clock.now += 2 * LEASE_MS;
      const [again] = await w.deliver([message], ports);
      expect(again?.kind).toBe('counted');
      expect(decision()?.decision?.partner).toBe('meta');
      expect(w.table().attribution).toEqual({ '2026-06-01|meta|probabilistic': { installs: 1 } });
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
