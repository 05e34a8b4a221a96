import fc from 'fast-check';
import {
  changedDeepLink,
  DEEP_LINK_FIELDS,
  DEEP_LINK_MAX,
  type DeepLink,
  type DeepLinkField,
  isDeepLinkText,
  resolveClickDeepLink,
} from '../../../functions/domain/links/deep-link';

describe('resolveClickDeepLink', () => {
  it("keeps the link's fields when the click URL names none", () => {
    expect(resolveClickDeepLink({ value: 'summer_sale', sub1: 'red' }, { sub1: 'not-a-deep-link-param' })).toEqual({
      value: 'summer_sale',
      sub1: 'red',
    });
  });

  it('overrides each field the click URL names, and adds fields the link lacks', () => {
    expect(resolveClickDeepLink({ value: 'summer_sale', sub1: 'red' }, { deep_link_value: 'winter', deep_link_sub10: 'x' })).toEqual({
      value: 'winter',
      sub1: 'red',
      sub10: 'x',
    });
  });

  it('is absent when neither the link nor the click URL has a field', () => {
    expect(resolveClickDeepLink(undefined, {})).toBeUndefined();
    expect(resolveClickDeepLink({}, { deep_link_value: '' })).toBeUndefined();
  });

  it("ignores an over-long, empty or control-character parameter whole, keeping the link's value", () => {
    const link = { value: 'home' };
    expect(resolveClickDeepLink(link, { deep_link_value: 'a'.repeat(DEEP_LINK_MAX + 1) })).toEqual(link);
    expect(resolveClickDeepLink(link, { deep_link_value: 'a'.repeat(DEEP_LINK_MAX) })).toEqual({ value: 'a'.repeat(DEEP_LINK_MAX) });
    expect(resolveClickDeepLink(link, { deep_link_value: '' })).toEqual(link);
    expect(resolveClickDeepLink(link, { deep_link_value: 'line\nbreak' })).toEqual(link);
    expect(resolveClickDeepLink(link, { deep_link_value: 'sep\u2028arator' })).toEqual(link);
  });

  it('keeps markup as text: the value is stored as sent, for JSON only', () => {
    expect(resolveClickDeepLink(undefined, { deep_link_value: '<script>alert(1)</script>' })).toEqual({
      value: '<script>alert(1)</script>',
    });
  });

  it('agrees with a field-by-field oracle for any link and query', () => {
    const text = fc.oneof(fc.string({ maxLength: 120 }), fc.constantFrom('', 'a'.repeat(100), 'a'.repeat(101), 'x\u0000y'));
    const fields = fc.dictionary(fc.constantFrom(...DEEP_LINK_FIELDS), fc.string({ minLength: 1, maxLength: 100 }));
    const query = fc.dictionary(
      fc.oneof(fc.constantFrom(...DEEP_LINK_FIELDS.map((f) => `deep_link_${f}`)), fc.constantFrom('sub1', 'deep_link', 'click_id')),
      text,
    );
    fc.assert(
      fc.property(fc.option(fields, { nil: undefined }), query, (link, params) => {
        const expected: DeepLink = {};
        for (const field of DEEP_LINK_FIELDS) {
          const sent = params[`deep_link_${field}`];
          // The oracle spells the rule out: 1 to 100 UTF-16 units, none a control or separator character.
          const storable =
            sent !== undefined &&
            sent.length >= 1 &&
            sent.length <= 100 &&
            [...sent].every((c) => {
              const code = c.codePointAt(0) ?? 0;
              return !(code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029);
            });
          const value = storable ? sent : link?.[field as DeepLinkField];
          if (value !== undefined) expected[field] = value;
        }
        const resolved = resolveClickDeepLink(link as DeepLink | undefined, params);
        expect(resolved).toEqual(Object.keys(expected).length ? expected : undefined);
        for (const value of Object.values(resolved ?? {})) expect(isDeepLinkText(value)).toBe(true);
      }),
    );
  });
});

describe('changedDeepLink', () => {
  it('replaces the fields given, clears those given null and keeps the rest', () => {
    expect(changedDeepLink({ value: 'a', sub1: 'b', sub2: 'c' }, { value: 'z', sub1: null })).toEqual({ value: 'z', sub2: 'c' });
  });

  it('is absent once every field is cleared', () => {
    expect(changedDeepLink({ value: 'a' }, { value: null })).toBeUndefined();
    expect(changedDeepLink(undefined, { sub3: 'x' })).toEqual({ sub3: 'x' });
  });
});
