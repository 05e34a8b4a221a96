import fc from 'fast-check';
import { deepLinkFieldsOf } from '../src/deep-link';
import { Phone } from './fakes';

// The SDK reads a link's deep link fields without a URL class (React Native's is incomplete);
// the oracle is WHATWG's URLSearchParams in Node, with the service's rule (1 to 100 characters).
const NAMES = [
  'deep_link_value',
  ...Array.from({ length: 10 }, (_, i) => `deep_link_sub${i + 1}`),
  'deep_link_sub11',
  'utm_source',
  'click_id',
];

function oracle(url: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URL(url).searchParams) {
    const field = name.replace(/^deep_link_/, '');
    if (name === field || !/^(value|sub([1-9]|10))$/.test(field) || field in fields) continue;
    if (value.length > 0 && value.length <= 100) fields[field] = value;
  }
  return fields;
}

describe('deep link fields of a URL', () => {
  it('are what URLSearchParams reads, within the service’s bounds, whatever the values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...NAMES), fc.string({ maxLength: 120, unit: 'grapheme' })), { maxLength: 14 }),
        (pairs) => {
          const query = pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
          const url = `https://go.example.com/l/AbC123?${query}#fragment`;
          expect(deepLinkFieldsOf(url)).toEqual(oracle(url));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ignores a field whose escape is broken', () => {
    expect(deepLinkFieldsOf('https://go.example.com/l/x?deep_link_value=%E0%A4%A&deep_link_sub1=ok')).toEqual({ sub1: 'ok' });
  });
});

describe('a start that fails', () => {
  it('rejects with the reason and leaves no Linking listener behind', async () => {
    const phone = new Phone();
    const noRandom = () => {
      throw new Error('no secure random source: import react-native-get-random-values before the SDK, or pass randomUuid');
    };
    await expect(phone.launch({}, { randomUuid: noRandom })).rejects.toThrow(/no secure random source/);
    expect(phone.linking.listening()).toBe(0);
  });
});
