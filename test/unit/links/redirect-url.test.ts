import fc from 'fast-check';
import { destinationFor, hasDestination, redirectLocation } from '../../../functions/domain/links/redirect-url';

const destinations = {
  ios_url: 'https://apps.apple.com/us/app/example/id1234567890?pt=42&ct=spring%20sale',
  android_url: 'https://play.google.com/store/apps/details?id=com.example.app&hl=en',
  web_url: 'https://example.com/get-the-app#top',
};
const attribution = { click_id: 'Zk3v_0-QxYm2cT8aLw1rNg', link_id: 'a1B2c3D4e5F6', partner: 'acme ads', campaign: 'spring&summer' };

describe('destinationFor', () => {
  it('sends each platform to its own destination', () => {
    expect(destinationFor(destinations, 'ios')?.field).toBe('ios_url');
    expect(destinationFor(destinations, 'android')?.field).toBe('android_url');
    expect(destinationFor(destinations, 'desktop')?.field).toBe('web_url');
  });

  it('falls back to the web URL, then to the other store', () => {
    expect(destinationFor({ web_url: destinations.web_url, android_url: destinations.android_url }, 'ios')?.field).toBe('web_url');
    expect(destinationFor({ android_url: destinations.android_url }, 'ios')?.field).toBe('android_url');
    expect(destinationFor({ ios_url: destinations.ios_url }, 'android')?.field).toBe('ios_url');
    expect(destinationFor({ android_url: destinations.android_url, ios_url: destinations.ios_url }, 'desktop')?.field).toBe('ios_url');
  });

  it('ignores anything in the configuration that is not an http(s) URL', () => {
    const hostile = { ios_url: 'javascript:alert(1)', web_url: 'not a url', android_url: 'data:text/html,hi' };
    expect(destinationFor(hostile, 'ios')).toBeUndefined();
    expect(hasDestination(hostile)).toBe(false);
    expect(hasDestination({})).toBe(false);
  });
});

describe('redirectLocation', () => {
  it('puts the URL-encoded click_id, link_id and partner in the Play Store referrer', () => {
    const location = new URL(redirectLocation(destinationFor(destinations, 'android')!, attribution));
    expect(location.origin + location.pathname).toBe('https://play.google.com/store/apps/details');
    expect(location.searchParams.get('id')).toBe('com.example.app');
    expect(location.searchParams.get('hl')).toBe('en');
    const referrer = new URLSearchParams(location.searchParams.get('referrer')!);
    expect(Object.fromEntries(referrer)).toEqual({
      click_id: attribution.click_id,
      link_id: attribution.link_id,
      utm_source: 'acme ads',
      utm_campaign: 'spring&summer',
    });
    expect(location.search).toContain(
      `referrer=${encodeURIComponent('click_id=Zk3v_0-QxYm2cT8aLw1rNg&link_id=a1B2c3D4e5F6&utm_source=acme%20ads&utm_campaign=spring%26summer')}`,
    );
  });

  it('adds click_id and link_id to the App Store and web URLs, keeping their query and fragment as they were', () => {
    const ios = redirectLocation(destinationFor(destinations, 'ios')!, attribution);
    expect(ios).toBe(
      `https://apps.apple.com/us/app/example/id1234567890?pt=42&ct=spring%20sale&click_id=${attribution.click_id}&link_id=${attribution.link_id}`,
    );
    const web = redirectLocation(destinationFor(destinations, 'desktop')!, attribution);
    expect(web).toBe(`https://example.com/get-the-app?click_id=${attribution.click_id}&link_id=${attribution.link_id}#top`);
  });

  it('replaces parameters of the configuration that carry our names', () => {
    const stale = {
      web_url: 'https://example.com/?click_id=old&x=1&link_id=old',
      android_url: 'https://play.google.com/store/apps/details?id=a&referrer=old',
    };
    expect(redirectLocation(destinationFor(stale, 'desktop')!, attribution)).toBe(
      `https://example.com/?x=1&click_id=${attribution.click_id}&link_id=${attribution.link_id}`,
    );
    const android = new URL(redirectLocation(destinationFor(stale, 'android')!, attribution));
    expect(android.searchParams.getAll('referrer')).toHaveLength(1);
  });

  it('leaves the destination as configured when the click was dropped', () => {
    expect(redirectLocation(destinationFor(destinations, 'android')!)).toBe(destinations.android_url);
    expect(redirectLocation(destinationFor(destinations, 'ios')!)).toBe(destinations.ios_url);
  });

  it('never lets attribution values change the host, path or the configured parameters', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.string(),
        fc.constantFrom('ios', 'android', 'desktop'),
        (clickId, partner, campaign, platform) => {
          const destination = destinationFor(destinations, platform as 'ios' | 'android' | 'desktop')!;
          const location = new URL(redirectLocation(destination, { click_id: clickId, link_id: 'L', partner, campaign }));
          expect(location.host).toBe(destination.url.host);
          expect(location.pathname).toBe(destination.url.pathname);
          expect(location.protocol).toBe('https:');
          for (const [name, value] of destination.url.searchParams) expect(location.searchParams.get(name)).toBe(value);
          if (destination.field === 'android_url') {
            expect(new URLSearchParams(location.searchParams.get('referrer')!).get('click_id')).toBe(clickId);
          } else {
            expect(location.searchParams.get('click_id')).toBe(clickId);
          }
        },
      ),
    );
  });
});
