import fc from 'fast-check';
import { linkIdFromPath } from '../../../functions/domain/links/link-path';

describe('the link id in a function URL request path', () => {
  it('is the one segment after /l/, percent-decoded', () => {
    expect(linkIdFromPath('/l/AbC123xYz0')).toBe('AbC123xYz0');
    expect(linkIdFromPath('/l/lnk_a-b')).toBe('lnk_a-b');
    expect(linkIdFromPath('/l/a%20b')).toBe('a b');
  });

  it.each([
    ['no segment', '/l/'],
    ['no slash after l', '/l'],
    ['a second segment', '/l/a/b'],
    ['a trailing slash', '/l/abc/'],
    ['a dot-dot trick', '/l/abc/..%2F..%2Fevil'],
    ['another prefix', '/x/abc'],
    ['a doubled slash', '//l/abc'],
    ['a malformed escape', '/l/%E0%A4%A'],
    ['the root', '/'],
    ['nothing', ''],
  ])('is none (an unknown link) for %s: %s', (_what, path) => {
    expect(linkIdFromPath(path)).toBe('');
  });

  it('gives back any segment a link URL was built with, and nothing for a path of more segments', () => {
    const segment = fc.string({ minLength: 1, maxLength: 80, unit: 'grapheme' });
    fc.assert(
      fc.property(segment, segment, (id, more) => {
        // The oracle: building the URL the way a partner's template does, and reading it back.
        expect(linkIdFromPath(`/l/${encodeURIComponent(id)}`)).toBe(id);
        expect(linkIdFromPath(`/l/${encodeURIComponent(id)}/${encodeURIComponent(more)}`)).toBe('');
      }),
      { numRuns: 300 },
    );
  });
});
