import { GVL, TCModel, TCString } from '@iabtechlabtcf/core';

/**
 * TC strings for tests, made by the IAB Tech Lab's own encoder: its GVL class built from a small
 * vendor list (no download), every vendor declaring consent and legitimate-interest purposes.
 */
export const PURPOSES = Array.from({ length: 11 }, (_, i) => i + 1);
export const VENDOR_IDS = [1, 2, 91, 755, 1024, 2000];

/** A vendor list naming VENDOR_IDS, each declaring consent and legitimate-interest purposes, as the encoder needs. */
export function vendorList(): GVL {
  const purposes = Object.fromEntries(PURPOSES.map((id) => [id, { id, name: `purpose ${id}`, description: '', illustrations: [] }]));
  const vendors = Object.fromEntries(
    VENDOR_IDS.map((id) => [
      id,
      {
        id,
        name: `vendor ${id}`,
        purposes: [1, 3, 4],
        legIntPurposes: [2, 7, 9, 10],
        flexiblePurposes: [],
        specialPurposes: [],
        features: [],
        specialFeatures: [],
        cookieMaxAgeSeconds: 0,
        usesCookies: false,
        cookieRefresh: false,
        usesNonCookieAccess: false,
        deviceStorageDisclosureUrl: '',
        urls: [],
      },
    ]),
  );
  return new GVL({
    gvlSpecificationVersion: 3,
    vendorListVersion: 50,
    tcfPolicyVersion: 5,
    lastUpdated: '2026-01-01T00:00:00Z',
    purposes,
    specialPurposes: {},
    features: {},
    specialFeatures: {},
    vendors,
    stacks: {},
    dataCategories: {},
  } as unknown as ConstructorParameters<typeof GVL>[0]);
}

/** A service-specific TC string giving consent to these vendors and purposes. */
export function tcString(vendorConsents: readonly number[], purposeConsents: readonly number[]): string {
  const model = new TCModel(vendorList());
  model.cmpId = 10;
  model.cmpVersion = 1;
  model.isServiceSpecific = true;
  model.vendorConsents.set([...vendorConsents]);
  model.purposeConsents.set([...purposeConsents]);
  return TCString.encode(model);
}
