import fc from 'fast-check';
import { CLICK_PARAMS, partnerUrl, trackingLinkUrl } from '../../../functions/domain/links/partner-url';

const BASE = 'https://track.example.com';

describe('trackingLinkUrl', () => {
  it('is the redirect route of the link on the service', () => {
    expect(trackingLinkUrl(BASE, 'a1B2c3D4e5F6')).toBe('https://track.example.com/l/a1B2c3D4e5F6');
  });
});

describe('partnerUrl', () => {
  it('keeps a partner macro literal, so the partner can find and substitute it', () => {
    expect(partnerUrl(BASE, 'L1', { click_id: '{click_id}' })).toBe('https://track.example.com/l/L1?click_id={click_id}');
    expect(partnerUrl(BASE, 'L1', { click_id: '{{ad.id}}', sub1: '{campaign-id}', sub2: '{_customparam}' })).toBe(
      'https://track.example.com/l/L1?click_id={{ad.id}}&sub1={campaign-id}&sub2={_customparam}',
    );
  });

  it('encodes every other character that is not safe in a query value, around the macros too', () => {
    expect(partnerUrl(BASE, 'L1', { sub1: 'a b&c=d#e%f+g/ü' })).toBe(
      'https://track.example.com/l/L1?sub1=a%20b%26c%3Dd%23e%25f%2Bg%2F%C3%BC',
    );
    expect(partnerUrl(BASE, 'L1', { sub1: 'spring sale/{ad.id}&x' })).toBe(
      'https://track.example.com/l/L1?sub1=spring%20sale%2F{ad.id}%26x',
    );
  });

  it('encodes braces that name no macro', () => {
    expect(partnerUrl(BASE, 'L1', { sub1: '{not a macro}', sub2: '{}', sub3: '{a&b}', sub4: '{"json":1}', sub5: '{{half}' })).toBe(
      'https://track.example.com/l/L1?sub1=%7Bnot%20a%20macro%7D&sub2=%7B%7D&sub3=%7Ba%26b%7D&sub4=%7B%22json%22%3A1%7D&sub5=%7B{half}',
    );
  });

  it('writes the click parameters in the interface order and leaves out absent ones', () => {
    expect(partnerUrl(BASE, 'L1', { mobile_only: '1', sub2: 'b', click_id: 'c' })).toBe(
      'https://track.example.com/l/L1?click_id=c&sub2=b&mobile_only=1',
    );
    expect(partnerUrl(BASE, 'L1', {})).toBe('https://track.example.com/l/L1');
  });

  it('hands the redirect back every value it was given, whatever its characters, and each macro in it literally', () => {
    const macro = fc.constantFrom('{click_id}', '{{ad.id}}', '{gclid}');
    const piece = fc.oneof(fc.string({ unit: 'grapheme' }), macro, fc.constantFrom('{', '}', '{a b}', '+', '%', '&', '='));
    fc.assert(
      fc.property(fc.constantFrom(...CLICK_PARAMS), fc.array(piece, { maxLength: 6 }), macro, (name, pieces, placed) => {
        const value = [...pieces, placed].join('');
        const url = partnerUrl(BASE, 'L1', { [name]: value });
        expect(new URL(url).searchParams.get(name)).toBe(value);
        expect(url.endsWith(placed)).toBe(true);
      }),
    );
  });

  it('gives a lone surrogate the replacement character rather than failing', () => {
    expect(partnerUrl(BASE, 'L1', { sub1: 'a\uD800b' })).toBe('https://track.example.com/l/L1?sub1=a%EF%BF%BDb');
  });
});
