import asnList from '../../../functions/domain/links/data/blocked-asns.json';
import { DEFAULT_BLOCKED_ASNS, edgeFilter } from '../../../functions/domain/links/link-filter';
import { ANDROID, CRAWLERS, DESKTOP, IOS } from './user-agents';

const person = { userAgent: IOS[0], country: 'US', asn: 7922 };

describe('edgeFilter', () => {
  it.each([...IOS, ...ANDROID, ...Object.values(DESKTOP)])('lets a browser through: %s', (userAgent) => {
    expect(edgeFilter({ ...person, userAgent }, {})).toBeUndefined();
  });

  it.each(Object.entries(CRAWLERS))('drops the crawler %s', (_name, userAgent) => {
    expect(edgeFilter({ ...person, userAgent }, {})).toBe('bot_user_agent');
  });

  it('drops an empty user agent', () => {
    expect(edgeFilter({ ...person, userAgent: '' }, {})).toBe('empty_user_agent');
    expect(edgeFilter({ ...person, userAgent: '   ' }, {})).toBe('empty_user_agent');
  });

  it('drops the large hosting and cloud networks but not the ones that carry people', () => {
    for (const asn of [16509, 14618, 396982, 8075, 14061, 16276, 24940, 63949, 20473, 45102, 31898, 132203, 51167, 12876, 60781]) {
      expect(edgeFilter({ ...person, asn }, {})).toBe('blocked_asn');
    }
    for (const { asn } of asnList.not_blocked) expect(DEFAULT_BLOCKED_ASNS.has(asn)).toBe(false);
    expect(edgeFilter({ ...person, asn: 15169 }, {})).toBeUndefined();
    expect(edgeFilter({ ...person, asn: undefined }, {})).toBeUndefined();
  });

  it('keeps a visitor to the allow list, failing one whose country is unknown', () => {
    const rules = { countries_allow: ['US', 'CA'] };
    expect(edgeFilter({ ...person, country: 'CA' }, rules)).toBeUndefined();
    expect(edgeFilter({ ...person, country: 'de' }, rules)).toBe('country_not_allowed');
    expect(edgeFilter({ ...person, country: undefined }, rules)).toBe('country_not_allowed');
  });

  it('drops a blocked country and lets an unknown country pass a block list', () => {
    const rules = { countries_block: ['RU'] };
    expect(edgeFilter({ ...person, country: 'ru' }, rules)).toBe('country_not_allowed');
    expect(edgeFilter({ ...person, country: undefined }, rules)).toBeUndefined();
    expect(edgeFilter({ ...person, country: 'US' }, rules)).toBeUndefined();
  });

  it('checks the user agent first, then the network, then the country', () => {
    const rules = { countries_allow: ['US'] };
    expect(edgeFilter({ userAgent: CRAWLERS.bingbot, asn: 16509, country: 'FR' }, rules)).toBe('bot_user_agent');
    expect(edgeFilter({ userAgent: IOS[0], asn: 16509, country: 'FR' }, rules)).toBe('blocked_asn');
  });
});
