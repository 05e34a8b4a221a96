import { platformOf } from '../../../functions/domain/links/platform';
import { ANDROID, CRAWLERS, DESKTOP, IOS, IPADOS_SAFARI } from './user-agents';

describe('platformOf', () => {
  it.each(IOS)('reads iOS from %s', (ua) => expect(platformOf(ua)).toBe('ios'));
  it.each(ANDROID)('reads Android from %s', (ua) => expect(platformOf(ua)).toBe('android'));
  it.each(Object.values(DESKTOP))('reads desktop from %s', (ua) => expect(platformOf(ua)).toBe('desktop'));

  it('takes iPadOS Safari, which sends the Mac user agent, for a desktop', () => {
    expect(platformOf(IPADOS_SAFARI)).toBe('desktop');
  });

  it('calls an empty or unparseable user agent desktop', () => {
    expect(platformOf('')).toBe('desktop');
    expect(platformOf(CRAWLERS.curl)).toBe('desktop');
  });
});
