import { type LinkApp, LinkConfigError, newLinkConfig } from '../../../functions/domain/links/link-config';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const made = { linkId: 'lnk_new', nowMs: NOW };
const app: LinkApp = {
  app_id: 'app_1',
  company_id: 'com_1',
  ios_url: 'https://apps.apple.com/app/id1',
  android_url: 'https://play.google.com/store/apps/details?id=com.example',
  lookback_days: 7,
};

describe('newLinkConfig', () => {
  it('copies the app destinations and lookback onto the link unless the link sets its own', () => {
    expect(newLinkConfig(app, { partner: 'acme', web_url: 'https://example.com', lookback_days: 3 }, made)).toEqual({
      link_id: 'lnk_new',
      app_id: 'app_1',
      company_id: 'com_1',
      partner: 'acme',
      campaign: undefined,
      honeypot: false,
      ios_url: 'https://apps.apple.com/app/id1',
      android_url: 'https://play.google.com/store/apps/details?id=com.example',
      web_url: 'https://example.com',
      countries_allow: undefined,
      countries_block: undefined,
      lookback_days: 3,
      created_ms: NOW,
    });
  });

  it('writes country codes upper-case and trimmed, and an empty list as none', () => {
    const link = newLinkConfig(app, { partner: 'acme', countries_allow: [' us', 'de '], countries_block: [] }, made);
    expect(link.countries_allow).toEqual(['US', 'DE']);
    expect(link.countries_block).toBeUndefined();
  });

  it('refuses a link that leads nowhere, with the message the admin CLI prints', () => {
    const bare: LinkApp = { app_id: 'app_1', company_id: 'com_1', lookback_days: 7 };
    expect(() => newLinkConfig(bare, { partner: 'acme', web_url: 'ftp://example.com' }, made)).toThrow(
      new LinkConfigError('the link has no destination: give --ios-url, --android-url or --web-url, or set them on the app'),
    );
  });

  it('makes a honeypot without any destination', () => {
    const bare: LinkApp = { app_id: 'app_1', company_id: 'com_1', lookback_days: 7 };
    expect(newLinkConfig(bare, { partner: 'trap', honeypot: true }, made)).toMatchObject({ honeypot: true, link_id: 'lnk_new' });
  });
});
