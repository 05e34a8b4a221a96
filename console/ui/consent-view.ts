/**
 * An install's latest consent as the install look-up shows it (docs/privacy.md, "Consent"): one
 * line per signal, in words, from what `admin install show` answers (its `consent`, with the TC
 * string's purposes and vendors as the IAB library decoded them). Pure, so node tests read it.
 */

export interface ShownConsent {
  gdpr_applies?: boolean;
  tcf_string?: string;
  ad_user_data?: boolean;
  ad_personalization?: boolean;
  third_party_sharing?: boolean;
  measurement?: boolean;
  ts_ms: number;
  event_id: string;
  tcf?:
    | { readable: false }
    | {
        readable: true;
        purpose_consents: number[];
        purpose_legitimate_interests: number[];
        vendor_consents: number;
        vendor_legitimate_interests: number;
        vendor_consent_ids: number[];
      };
}

const NOT_SAID = 'not said';
const said = (value: boolean | undefined, yes: string, no: string) => (value === undefined ? NOT_SAID : value ? yes : no);
const ids = (list: readonly number[]) => (list.length ? list.join(', ') : 'none');

function tcfLines(consent: ShownConsent): [string, string][] {
  if (consent.tcf_string === undefined) return [['TCF', 'no TC string']];
  const tcf = consent.tcf;
  if (!tcf?.readable) return [['TCF', 'a TC string the IAB library cannot read: no partner gets a postback where the GDPR applies']];
  const listed = tcf.vendor_consent_ids.length < tcf.vendor_consents ? `${ids(tcf.vendor_consent_ids)}, …` : ids(tcf.vendor_consent_ids);
  return [
    ['TCF purposes with consent', ids(tcf.purpose_consents)],
    ['TCF purposes with legitimate interest', ids(tcf.purpose_legitimate_interests)],
    ['TCF vendors with consent', tcf.vendor_consents ? `${tcf.vendor_consents} (${listed})` : 'none'],
    ['TCF vendors with legitimate interest', String(tcf.vendor_legitimate_interests)],
  ];
}

/** The lines of the consent section: label and value. */
export function consentLines(consent: ShownConsent): [string, string][] {
  return [
    ['GDPR applies', said(consent.gdpr_applies, 'yes', 'no')],
    ...tcfLines(consent),
    ['DMA: ad_user_data', said(consent.ad_user_data, 'granted', 'denied')],
    ['DMA: ad_personalization', said(consent.ad_personalization, 'granted', 'denied')],
    ['third_party_sharing', said(consent.third_party_sharing, 'granted', 'refused')],
    ['measurement', said(consent.measurement, 'granted', 'withdrawn')],
  ];
}
