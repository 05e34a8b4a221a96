import { TCModel, TCString } from '@iabtechlabtcf/core';
import fc from 'fast-check';
import type { Consent } from '../../../functions/domain/privacy/consent';
import {
  DEFAULT_PROBABILISTIC_BASIS,
  PROBABILISTIC_BASES,
  type ProbabilisticBasis,
  probabilisticAllowed,
  probabilisticConsented,
} from '../../../functions/domain/privacy/probabilistic-basis';
import { PURPOSES, VENDOR_IDS, vendorList } from '../../support/tcf';

// The documented basis of probabilistic matching (docs/privacy.md, "Probabilistic matching").

const gvl = vendorList();
/** A TC string the IAB library encodes, with consent for these purposes (every vendor consented, every purpose's LI given). */
function tcString(purposes: readonly number[]): string {
  const model = new TCModel(gvl);
  model.cmpId = 10;
  model.cmpVersion = 1;
  model.isServiceSpecific = true;
  model.vendorConsents.set([...VENDOR_IDS]);
  model.purposeConsents.set([...purposes]);
  // Legitimate interest for purpose 7 is not consent: it must not be enough.
  model.purposeLegitimateInterests.set([2, 7, 9, 10]);
  return TCString.encode(model);
}

describe('probabilistic matching under the consent basis', () => {
  it.each<[string, Consent | undefined, boolean]>([
    ['no consent known', undefined, false],
    ['an empty consent outside the GDPR', {}, true],
    ['measurement granted outside the GDPR', { measurement: true }, true],
    ['measurement withdrawn', { measurement: false, ad_user_data: true }, false],
    ['ad_user_data refused outside the GDPR', { ad_user_data: false }, false],
    ['the GDPR applies without a TC string, measurement not said', { gdpr_applies: true, ad_user_data: true }, false],
    ['the GDPR applies without a TC string, measurement granted', { gdpr_applies: true, measurement: true }, true],
    ['the GDPR applies with purposes 1 and 7 consented', { gdpr_applies: true, tcf_string: tcString([1, 7]) }, true],
    ['the GDPR applies without purpose 7 (legitimate interest only)', { gdpr_applies: true, tcf_string: tcString([1, 9]) }, false],
    ['the GDPR applies without purpose 1', { gdpr_applies: true, tcf_string: tcString([7]) }, false],
    ['the GDPR applies with an unreadable TC string', { gdpr_applies: true, tcf_string: 'AAAA' }, false],
    ['a TC string with the GDPR not applying', { gdpr_applies: false, tcf_string: tcString([]) }, true],
  ])('%s', (_, consent, allowed) => {
    expect(probabilisticConsented(consent)).toBe(allowed);
  });

  it('allows a match under the GDPR exactly when the string consents to purposes 1 and 7, for random purpose choices', () => {
    fc.assert(
      fc.property(fc.subarray(PURPOSES), (purposes) => {
        const oracle = purposes.includes(1) && purposes.includes(7);
        expect(probabilisticConsented({ gdpr_applies: true, tcf_string: tcString(purposes) })).toBe(oracle);
      }),
      { numRuns: 40 },
    );
  });

  it.each<[ProbabilisticBasis | undefined, boolean, Consent | undefined, boolean]>([
    [undefined, true, undefined, true],
    ['legitimate_interest', true, { gdpr_applies: true, ad_user_data: false }, true],
    ['legitimate_interest', true, { measurement: false }, false],
    ['consent', true, { measurement: true }, true],
    ['consent', true, undefined, false],
    ['off', true, { measurement: true }, false],
    ['legitimate_interest', false, { measurement: true }, false],
    ['consent', false, { measurement: true }, false],
  ])('basis %s with the switch %s and consent %j: %s', (basis, probabilistic, consent, allowed) => {
    expect(probabilisticAllowed({ probabilistic, ...(basis ? { probabilistic_basis: basis } : {}) }, consent)).toBe(allowed);
  });

  it('defaults to legitimate_interest, one of the documented bases', () => {
    expect(DEFAULT_PROBABILISTIC_BASIS).toBe('legitimate_interest');
    expect(PROBABILISTIC_BASES).toEqual(['consent', 'legitimate_interest', 'off']);
  });
});
