import { decodeTcf, type TcfSignals } from './consent';

/**
 * What an install's TC string says, for a person reading it (`admin install show`, the console's
 * install look-up): the purposes and vendors with consent or legitimate interest, decoded by the
 * IAB Tech Lab's library as the postback decision decodes them (consent.ts, decodeTcf). A string
 * may name hundreds of vendors: the lists stop at MAX_LISTED_VENDORS, the counts do not.
 */
export const MAX_LISTED_VENDORS = 50;

export type TcfSummary =
  | { readonly readable: false }
  | {
      readonly readable: true;
      readonly purpose_consents: readonly number[];
      readonly purpose_legitimate_interests: readonly number[];
      readonly vendor_consents: number;
      readonly vendor_legitimate_interests: number;
      /** The first MAX_LISTED_VENDORS vendor ids with consent, in order. */
      readonly vendor_consent_ids: readonly number[];
    };

export function tcfSummary(tcString: string, decode: (tcString: string) => TcfSignals | undefined = decodeTcf): TcfSummary {
  const signals = decode(tcString);
  if (!signals) return { readable: false };
  const sorted = (ids: ReadonlySet<number>) => [...ids].sort((a, b) => a - b);
  return {
    readable: true,
    purpose_consents: sorted(signals.purposeConsents),
    purpose_legitimate_interests: sorted(signals.purposeLegitimateInterests),
    vendor_consents: signals.vendorConsents.size,
    vendor_legitimate_interests: signals.vendorLegitimateInterests.size,
    vendor_consent_ids: sorted(signals.vendorConsents).slice(0, MAX_LISTED_VENDORS),
  };
}
