import { type Consent, decodeTcf, PURPOSE_DEVICE_ACCESS, PURPOSE_MEASURE_ADS, type TcfSignals } from './consent';

/**
 * The lawful basis an app documents for probabilistic matching (matching an install to a click by
 * address and platform, docs/privacy.md, "Probabilistic matching"), set with `admin app update
 * --probabilistic-basis`. It narrows the app's `--probabilistic` switch, never widens it:
 * - `legitimate_interest`: matched whenever the switch is on (the behaviour before the setting),
 *   unless the install's consent says `measurement: false` (an objection);
 * - `consent`: matched only when the install's consent allows it (probabilisticConsented);
 * - `off`: never matched probabilistically, whatever the switch says.
 */
export const PROBABILISTIC_BASES = ['consent', 'legitimate_interest', 'off'] as const;
export type ProbabilisticBasis = (typeof PROBABILISTIC_BASES)[number];

/**
 * An app that never set one: `legitimate_interest`, so that every app deployed before the setting
 * keeps the attribution its switch gave it (a default of `consent` would silently turn most of
 * its probabilistic installs organic on the day of the upgrade).
 */
export const DEFAULT_PROBABILISTIC_BASIS: ProbabilisticBasis = 'legitimate_interest';

export const probabilisticBasisOf = (app: { readonly probabilistic_basis?: ProbabilisticBasis }): ProbabilisticBasis =>
  app.probabilistic_basis ?? DEFAULT_PROBABILISTIC_BASIS;

/**
 * Whether the install's consent allows probabilistic matching under the `consent` basis
 * (docs/privacy.md, "Probabilistic matching"):
 * - no consent known: no;
 * - `measurement: false`: no;
 * - the GDPR applies with a TC string: purpose 1 (store or access information on a device) and
 *   purpose 7 (measure advertising performance) both with consent; legitimate interest is not
 *   consent, and an unreadable string allows nothing;
 * - the GDPR applies without a TC string: only with `measurement: true`;
 * - otherwise: unless `ad_user_data: false`.
 */
export function probabilisticConsented(
  consent: Consent | undefined,
  decode: (tcString: string) => TcfSignals | undefined = decodeTcf,
): boolean {
  if (!consent || consent.measurement === false) return false;
  if (consent.gdpr_applies === true) {
    if (consent.tcf_string === undefined) return consent.measurement === true;
    const tcf = decode(consent.tcf_string);
    if (!tcf) return false;
    return tcf.purposeConsents.has(PURPOSE_DEVICE_ACCESS) && tcf.purposeConsents.has(PURPOSE_MEASURE_ADS);
  }
  return consent.ad_user_data !== false;
}

/**
 * Whether an install (or a first launch) may be matched probabilistically: the app's switch is on
 * and its basis allows it for the consent known (none for a first launch, whose request carries no
 * consent).
 */
export function probabilisticAllowed(
  app: { readonly probabilistic: boolean; readonly probabilistic_basis?: ProbabilisticBasis },
  consent: Consent | undefined,
): boolean {
  if (!app.probabilistic) return false;
  const basis = probabilisticBasisOf(app);
  // A user who withdrew measurement has objected: legitimate interest yields to it (GDPR art. 21).
  if (basis === 'legitimate_interest') return consent?.measurement !== false;
  return basis === 'consent' && probabilisticConsented(consent);
}
