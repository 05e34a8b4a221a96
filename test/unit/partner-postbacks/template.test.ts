import fc from 'fast-check';
import { checkTemplate, POSTBACK_MACROS, renderTemplate, TemplateError } from '../../../functions/domain/partner-postbacks/template';

describe('postback templates', () => {
  it('accepts every documented macro in the path and query', () => {
    const template = `https://partner.example/cb/{event_name}?${POSTBACK_MACROS.map((m) => `${m.name}={${m.name}}`).join('&')}`;
    expect(checkTemplate(template)).toEqual(['event_name', ...POSTBACK_MACROS.map((m) => m.name)]);
  });

  it.each([
    ['an unknown macro', 'https://p.example/?x={install_uuid}', /unknown macro \{install_uuid\}/],
    ['a device macro', 'https://p.example/?x={device_id}', /unknown macro/],
    ['a client address macro', 'https://p.example/?x={ip}', /unknown macro/],
    ['a stray brace', 'https://p.example/?x={click_id', /brace/],
    ['a macro in the host', 'https://{sub1}.p.example/', /host/],
    ['a macro as the host', 'https://{campaign}/x', /host/],
    ['credentials', 'https://user:pw@p.example/', /credentials/],
    ['another scheme', 'ftp://p.example/', /https/],
    ['not a URL', 'partner callback', /not a URL/],
  ])('refuses %s', (_case, template, message) => {
    expect(() => checkTemplate(template)).toThrow(TemplateError);
    expect(() => checkTemplate(template)).toThrow(message);
  });

  it('URL-encodes every value so it cannot change the URL around it', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (sub1, campaign) => {
        const rendered = renderTemplate('https://p.example/cb?s={sub1}&c={campaign}&k=1', { sub1, campaign });
        const url = new URL(rendered);
        expect(url.host).toBe('p.example');
        expect(url.searchParams.get('s')).toBe(sub1);
        expect(url.searchParams.get('c')).toBe(campaign);
        expect(url.searchParams.get('k')).toBe('1');
      }),
    );
  });

  it('leaves a macro without a value empty', () => {
    expect(renderTemplate('https://p.example/?c={campaign}&r={revenue_usd}', { revenue_usd: 0 })).toBe('https://p.example/?c=&r=0');
  });
});
