import fc from 'fast-check';
import { MAX_LISTED_VENDORS, tcfSummary } from '../../../functions/domain/privacy/tcf-summary';
import { PURPOSES, tcString, VENDOR_IDS } from '../../support/tcf';

describe("install show's TCF summary", () => {
  it("lists the purposes and vendors the IAB library's own encoder gave consent to, on random consent strings", () => {
    fc.assert(
      fc.property(fc.subarray(VENDOR_IDS), fc.subarray(PURPOSES), (vendors, purposes) => {
        const summary = tcfSummary(tcString(vendors, purposes));
        expect(summary).toEqual({
          readable: true,
          purpose_consents: [...purposes].sort((a, b) => a - b),
          purpose_legitimate_interests: [],
          vendor_consents: vendors.length,
          vendor_legitimate_interests: 0,
          vendor_consent_ids: [...vendors].sort((a, b) => a - b),
        });
      }),
      { numRuns: 40 },
    );
  });

  it('says a string the library cannot read is unreadable', () => {
    expect(tcfSummary('not-a-tc-string')).toEqual({ readable: false });
  });

  it('lists at most 50 vendor ids but counts them all', () => {
    const many = Array.from({ length: 120 }, (_, i) => i + 1);
    const summary = tcfSummary('x', () => ({
      vendorConsents: new Set(many.reverse()),
      vendorLegitimateInterests: new Set([3]),
      purposeConsents: new Set([7, 1]),
      purposeLegitimateInterests: new Set(),
    }));
    expect(summary).toMatchObject({ readable: true, vendor_consents: 120, vendor_legitimate_interests: 1, purpose_consents: [1, 7] });
    expect(summary.readable && summary.vendor_consent_ids).toEqual(many.sort((a, b) => a - b).slice(0, MAX_LISTED_VENDORS));
  });
});
