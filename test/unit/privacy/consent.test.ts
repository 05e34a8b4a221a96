import { TCModel, TCString } from '@iabtechlabtcf/core';
import fc from 'fast-check';
import {
  type Consent,
  consentFault,
  decodeTcf,
  dmaValues,
  latestConsents,
  PURPOSE_DEVICE_ACCESS,
  PURPOSE_MEASURE_ADS,
  sharingVerdict,
  type TcfSignals,
} from '../../../functions/domain/privacy/consent';
import { PURPOSES, VENDOR_IDS, vendorList } from '../../support/tcf';

const subsetOf = (values: readonly number[]) => fc.subarray([...values]);
/** Since TCF 2.2, purposes 3 to 6 may not rest on legitimate interest: the encoder drops them. */
const LEGITIMATE_INTEREST_PURPOSES = [2, 7, 8, 9, 10, 11];

describe('consent: the TC string', () => {
  const gvl = vendorList();

  it('reads what the IAB library encoded, for random choices of vendors and purposes', () => {
    fc.assert(
      fc.property(
        subsetOf(VENDOR_IDS),
        subsetOf(VENDOR_IDS),
        subsetOf(PURPOSES),
        subsetOf(LEGITIMATE_INTEREST_PURPOSES),
        (vendorConsents, vendorInterests, purposeConsents, purposeInterests) => {
          const model = new TCModel(gvl);
          model.cmpId = 10;
          model.cmpVersion = 1;
          model.isServiceSpecific = true;
          model.vendorConsents.set(vendorConsents);
          model.vendorLegitimateInterests.set(vendorInterests);
          model.purposeConsents.set(purposeConsents);
          model.purposeLegitimateInterests.set(purposeInterests);
          const encoded = TCString.encode(model);
          expect(consentFault({ gdpr_applies: true, tcf_string: encoded })).toBeUndefined();
          const read = decodeTcf(encoded);
          expect(read).toBeDefined();
          const sorted = (set: ReadonlySet<number>) => [...set].sort((a, b) => a - b);
          expect(sorted(read!.vendorConsents)).toEqual([...vendorConsents].sort((a, b) => a - b));
          expect(sorted(read!.purposeConsents)).toEqual([...purposeConsents].sort((a, b) => a - b));
          // The encoder keeps a vendor's legitimate interest only for a vendor that declares one (all of them here).
          expect(sorted(read!.vendorLegitimateInterests)).toEqual([...vendorInterests].sort((a, b) => a - b));
          expect(sorted(read!.purposeLegitimateInterests)).toEqual([...purposeInterests].sort((a, b) => a - b));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('reads nothing from a string that is not a TC string', () => {
    expect(decodeTcf('not-a-tc-string')).toBeUndefined();
    expect(decodeTcf('AAAA')).toBeUndefined();
  });
});

describe('consent: which members are well formed', () => {
  it('names the member at fault', () => {
    expect(consentFault({})).toBeUndefined();
    expect(consentFault({ gdpr_applies: null, measurement: true, tcf_string: 'Ab-_9.x' })).toBeUndefined();
    expect(consentFault('granted')).toBe('consent');
    expect(consentFault([])).toBe('consent');
    expect(consentFault({ measurement: true, granted: true })).toBe('consent');
    expect(consentFault({ gdpr_applies: 'true' })).toBe('consent.gdpr_applies');
    expect(consentFault({ ad_user_data: 1 })).toBe('consent.ad_user_data');
    expect(consentFault({ tcf_string: 'a b' })).toBe('consent.tcf_string');
    expect(consentFault({ tcf_string: '' })).toBe('consent.tcf_string');
    expect(consentFault({ tcf_string: 'a..b' })).toBe('consent.tcf_string');
    expect(consentFault({ tcf_string: 'a'.repeat(4096) })).toBeUndefined();
    expect(consentFault({ tcf_string: 'a'.repeat(4097) })).toBe('consent.tcf_string');
  });
});

/** What a TC string says, given directly: the verdict's rules without the encoder. */
const signals = (vendors: number[], purposes: number[], vendorLi: number[] = [], purposeLi: number[] = []): TcfSignals => ({
  vendorConsents: new Set(vendors),
  purposeConsents: new Set(purposes),
  vendorLegitimateInterests: new Set(vendorLi),
  purposeLegitimateInterests: new Set(purposeLi),
});

describe('consent: what is shared with a partner', () => {
  const VENDOR = 755;
  /** null: the partner has no vendor id. */
  const verdict = (consent: Consent | undefined, tcf?: TcfSignals, vendorId: number | null = VENDOR) =>
    sharingVerdict(consent, vendorId ?? undefined, () => tcf);

  it('shares when nothing is known, and follows third_party_sharing outside the GDPR', () => {
    expect(verdict(undefined)).toEqual({ share: true });
    expect(verdict({ gdpr_applies: false })).toEqual({ share: true });
    expect(verdict({ third_party_sharing: true })).toEqual({ share: true });
    expect(verdict({ gdpr_applies: false, third_party_sharing: false })).toEqual({
      share: false,
      reason: 'consent: third_party_sharing refused',
    });
  });

  it('withholds everything once measurement is withdrawn', () => {
    expect(verdict({ measurement: false, third_party_sharing: true })).toMatchObject({
      share: false,
      reason: 'consent: measurement withdrawn',
    });
  });

  it('under the GDPR without a TC string, shares only with third_party_sharing granted', () => {
    expect(verdict({ gdpr_applies: true, third_party_sharing: true })).toEqual({ share: true });
    expect(verdict({ gdpr_applies: true })).toMatchObject({ share: false });
    expect(verdict({ gdpr_applies: true, third_party_sharing: false })).toMatchObject({ share: false });
  });

  it('under the GDPR with a TC string, matches an independent reading of the TCF rules', () => {
    fc.assert(
      fc.property(
        subsetOf(VENDOR_IDS),
        subsetOf(VENDOR_IDS),
        subsetOf(PURPOSES),
        subsetOf(PURPOSES),
        fc.option(fc.constantFrom(...VENDOR_IDS, 3), { nil: null }),
        (vendors, vendorLi, purposes, purposeLi, vendorId) => {
          const tcf = signals(vendors, purposes, vendorLi, purposeLi);
          const got = verdict({ gdpr_applies: true, tcf_string: 'x', third_party_sharing: true }, tcf, vendorId);
          const expected =
            vendorId !== null &&
            vendors.includes(vendorId) &&
            purposes.includes(PURPOSE_DEVICE_ACCESS) &&
            (purposes.includes(PURPOSE_MEASURE_ADS) || (purposeLi.includes(PURPOSE_MEASURE_ADS) && vendorLi.includes(vendorId)));
          expect(got.share).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('withholds for an unreadable TC string, and names why', () => {
    expect(verdict({ gdpr_applies: true, tcf_string: 'x' }, undefined)).toEqual({ share: false, reason: 'consent: unreadable TC string' });
    expect(verdict({ gdpr_applies: true, tcf_string: 'x' }, signals([VENDOR], [1, 7]), null)).toEqual({
      share: false,
      reason: 'consent: GDPR applies and the partner has no TCF vendor id',
    });
    expect(verdict({ gdpr_applies: true, tcf_string: 'x' }, signals([], [1, 7]))).toEqual({
      share: false,
      reason: `consent: no TCF consent for vendor ${VENDOR}`,
    });
  });

  it("gives Google's DMA values as 1, 0 or nothing", () => {
    expect(dmaValues(undefined)).toEqual({ eea: undefined, ad_personalization: undefined, ad_user_data: undefined });
    expect(dmaValues({ gdpr_applies: true, ad_personalization: false, ad_user_data: true })).toEqual({
      eea: 1,
      ad_personalization: 0,
      ad_user_data: 1,
    });
  });
});

describe("consent: an object's latest per install", () => {
  const line = (install: string, ts: number, id: string, consent: unknown, status = 'accepted') => ({
    status,
    install_uuid: install,
    corrected_ts: ts,
    event: { event_id: id, consent },
  });

  it('keeps the latest by corrected time, then event id, of accepted lines with a well-formed consent', () => {
    const latest = latestConsents([
      line('u1', 10, 'b', { measurement: true }),
      line('u1', 30, 'a', { measurement: false }),
      line('u1', 30, 'c', { third_party_sharing: false }),
      line('u1', 40, 'd', { measurement: 'no' }),
      line('u1', 50, 'e', { measurement: true }, 'rejected'),
      line('u2', 5, 'f', { gdpr_applies: true, tcf_string: 'AB' }),
      line('u3', 5, 'g', undefined),
    ]);
    expect(Object.fromEntries(latest)).toEqual({
      u1: { third_party_sharing: false, ts_ms: 30, event_id: 'c' },
      u2: { gdpr_applies: true, tcf_string: 'AB', ts_ms: 5, event_id: 'f' },
    });
  });

  it('gives the same answer in any order of the lines', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('u1', 'u2'), fc.integer({ min: 0, max: 5 }), fc.constantFrom('a', 'b', 'c'), fc.boolean()), {
          maxLength: 12,
        }),
        (draws) => {
          const lines = draws.map(([install, ts, id, measurement]) => line(install, ts, `${id}${ts}`, { measurement }));
          const forward = Object.fromEntries(latestConsents(lines));
          const backward = Object.fromEntries(latestConsents([...lines].reverse()));
          // An id names one event: the same id at the same time is the same consent.
          const unique = new Set(lines.map((l) => `${l.install_uuid}:${l.event.event_id}`)).size === lines.length;
          if (unique) expect(backward).toEqual(forward);
        },
      ),
    );
  });
});
