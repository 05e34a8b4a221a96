import { landingOf } from '../src/landing';

describe('the landing URL (web-to-app)', () => {
  it('reads the click id, link id and deep link fields a tracking link and the page put in the query', () => {
    expect(
      landingOf('https://shop.example.com/sale?utm_source=x&click_id=clk_1&link_id=AbC123&deep_link_value=sword_42&deep_link_sub3=blue'),
    ).toEqual({
      clickId: 'clk_1',
      linkId: 'AbC123',
      deepLink: { value: 'sword_42', sub3: 'blue' },
    });
  });

  it('reads nothing from a URL without them, or one that is not a URL', () => {
    expect(landingOf('https://shop.example.com/?utm_source=x')).toBeUndefined();
    expect(landingOf('not a url')).toBeUndefined();
  });

  it('leaves out an id the service would refuse and a deep link field past 100 characters', () => {
    expect(
      landingOf(`https://shop.example.com/?click_id=${'x'.repeat(129)}&link_id=a%20b&deep_link_value=${'v'.repeat(101)}`),
    ).toBeUndefined();
  });
});
