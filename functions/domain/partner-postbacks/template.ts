/**
 * Partner postback URL templates (docs/postbacks.md): a URL with macros in
 * braces, `https://partner.example/cb?click={click_id}&ev={event_name}`. A template is checked
 * when it is set: every macro must be one of POSTBACK_MACROS, the braces must pair, and the URL
 * must parse. At send time each macro is replaced by its value, URL-encoded; a value the
 * postback does not have (no campaign, say) becomes the empty string.
 *
 * No macro reaches the install_uuid, a device identifier or a client IP: the partner learns what
 * its own click carried, and what the install and event did, nothing that identifies the person.
 */

export const POSTBACK_MACROS = [
  { name: 'click_id', description: "The partner's own click id (ext_click_id of the link URL)" },
  { name: 'link_id', description: 'The tracking link that was clicked' },
  { name: 'campaign', description: "The link's campaign" },
  { name: 'sub1', description: 'sub1 of the click' },
  { name: 'sub2', description: 'sub2 of the click' },
  { name: 'sub3', description: 'sub3 of the click' },
  { name: 'sub4', description: 'sub4 of the click' },
  { name: 'sub5', description: 'sub5 of the click' },
  { name: 'event_name', description: '"install", or the in-app event name' },
  { name: 'revenue_usd', description: 'Revenue of the event in USD, up to 6 decimals (0 for none)' },
  { name: 'install_time', description: 'Install time, epoch milliseconds (server-corrected)' },
  { name: 'event_time', description: 'Event time, epoch milliseconds (the install time for an install postback)' },
  { name: 'platform', description: 'ios or android' },
  { name: 'country', description: 'Country of the click, ISO 3166-1 alpha-2 (empty when unknown)' },
  { name: 'attribution_type', description: 'deterministic or probabilistic' },
  { name: 'ctit_seconds', description: 'Click-to-install time in whole seconds' },
  { name: 'is_reinstall', description: 'true or false' },
  { name: 'fraud_reasons', description: 'Comma-separated fraud flags (ctit_under_10s, click_injection, honeypot_ip); empty when none' },
  { name: 'postback_id', description: 'Stable id of this postback: the same on every retry, for de-duplication' },
  {
    name: 'eea',
    description: "Google's DMA `eea`: 1 when the GDPR applies to the user (consent's gdpr_applies), 0 when not, empty when unknown",
  },
  {
    name: 'ad_personalization',
    description: "Google's DMA `ad_personalization`: the consent's ad_personalization as 1 or 0, empty when unknown",
  },
  { name: 'ad_user_data', description: "Google's DMA `ad_user_data`: the consent's ad_user_data as 1 or 0, empty when unknown" },
] as const satisfies readonly { name: string; description: string }[];

export type MacroName = (typeof POSTBACK_MACROS)[number]['name'];
export type MacroValues = Readonly<Partial<Record<MacroName, string | number | boolean | undefined>>>;

const KNOWN = new Set<string>(POSTBACK_MACROS.map((macro) => macro.name));
const MACRO = /\{([^{}]*)\}/g;
export const MAX_TEMPLATE_CHARS = 2048;

export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** The macros a template uses; throws TemplateError for an unknown macro, stray brace or bad URL. */
export function checkTemplate(template: string): string[] {
  if (template.length > MAX_TEMPLATE_CHARS) throw new TemplateError(`a template is at most ${MAX_TEMPLATE_CHARS} characters`);
  const used: string[] = [];
  for (const [, name = ''] of template.matchAll(MACRO)) {
    if (!KNOWN.has(name)) throw new TemplateError(`unknown macro {${name}}; known: ${[...KNOWN].map((m) => `{${m}}`).join(' ')}`);
    used.push(name);
  }
  const rest = template.replace(MACRO, '');
  if (rest.includes('{') || rest.includes('}')) throw new TemplateError('a brace without its pair: macros are written {name}');
  // The URL must parse with every macro replaced, and a macro may not stand for the scheme or host:
  // the destination is fixed by the template, so it can be checked before anything is sent.
  let parsed: URL;
  try {
    parsed = new URL(template.replace(MACRO, 'x'));
  } catch {
    throw new TemplateError('not a URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new TemplateError('the URL must be https:// (or http:// to a local receiver)');
  const [authority = ''] = template.slice(template.indexOf('//') + 2).split(/[/?#]/, 1);
  if (authority.includes('{')) throw new TemplateError('macros may be used in the path and query only, not in the host');
  if (parsed.username || parsed.password) throw new TemplateError('credentials in the URL are not allowed');
  return used;
}

/** The template with each macro replaced by its URL-encoded value. */
export function renderTemplate(template: string, values: MacroValues): string {
  return template.replace(MACRO, (_match, name: MacroName) => {
    const value = values[name];
    return value === undefined ? '' : encodeURIComponent(String(value));
  });
}
