import { consentLines } from '../../../console/ui/consent-view';

describe("the install look-up's consent lines", () => {
  it('says what the app did not say, and an unreadable TC string as such', () => {
    const lines = Object.fromEntries(
      consentLines({ ts_ms: 1, event_id: 'e', tcf_string: 'x', tcf: { readable: false }, measurement: false }),
    );
    expect(lines).toEqual({
      'GDPR applies': 'not said',
      TCF: 'a TC string the IAB library cannot read: no partner gets a postback where the GDPR applies',
      'DMA: ad_user_data': 'not said',
      'DMA: ad_personalization': 'not said',
      third_party_sharing: 'not said',
      measurement: 'withdrawn',
    });
  });

  it('marks a vendor list cut short, and says when there is no TC string', () => {
    const tcf = {
      readable: true as const,
      purpose_consents: [1],
      purpose_legitimate_interests: [7],
      vendor_consents: 51,
      vendor_legitimate_interests: 2,
      vendor_consent_ids: [1, 2],
    };
    expect(Object.fromEntries(consentLines({ ts_ms: 1, event_id: 'e', tcf_string: 'x', tcf }))['TCF vendors with consent']).toBe(
      '51 (1, 2, …)',
    );
    expect(Object.fromEntries(consentLines({ ts_ms: 1, event_id: 'e', third_party_sharing: true }))).toMatchObject({
      TCF: 'no TC string',
      third_party_sharing: 'granted',
    });
  });
});
