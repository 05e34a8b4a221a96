import type { AttributionDecision } from '../../../functions/domain/attribution/decision';
import { postbackConfig } from '../../../functions/domain/partner-postbacks/config';
import { type PostbackIntent, postbacksOf, type TriggerPorts, usd } from '../../../functions/domain/partner-postbacks/trigger';
import type { ConsentRecord } from '../../../functions/domain/privacy/consent';
import { installKey } from '../../../functions/domain/privacy/privacy';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 12);
const decision = (extra: Partial<AttributionDecision> = {}): AttributionDecision => ({
  partner: 'acme',
  attribution_type: 'deterministic',
  rule: 'click_id',
  reinstall: false,
  fraud_reasons: [],
  ext_click_id: 'ext-1',
  campaign: 'spring',
  sub1: 'a',
  ctit_seconds: 40,
  ...extra,
});
const installIntent = (extra: Partial<AttributionDecision> = {}): PostbackIntent => ({
  kind: 'install',
  installUuid: 'u1',
  eventId: 'i-1',
  tsMs: T0,
  platform: 'android',
  decision: decision(extra),
});
const eventIntent = (name: string, offsetMs: number, partner = 'acme'): PostbackIntent => ({
  kind: 'event',
  installUuid: 'u1',
  eventId: `e-${name}-${offsetMs}`,
  name,
  tsMs: T0 + offsetMs,
  revenueMicros: 4_990_000,
  member: { id: 'i-1', ts_ms: T0, partner },
});

function ports(configs: ReturnType<typeof postbackConfig>[], install: AttributionDecision = decision()): TriggerPorts {
  return { configs: async () => configs, installOf: async () => ({ decision: install, platform: 'android' }) };
}
const acme = (extra: Parameters<typeof postbackConfig>[1] extends infer I ? Partial<I> : never = {}) =>
  postbackConfig(
    'app_1',
    {
      partner: 'acme',
      url: 'https://acme.example/pb?c={click_id}&e={event_name}&r={revenue_usd}&f={fraud_reasons}&id={postback_id}',
      ...extra,
    },
    T0,
  );

describe('which postbacks a decision sends', () => {
  it('sends the install postback to the partner of the decision, and nothing for an organic install or an unconfigured partner', async () => {
    const records = await postbacksOf(
      ports([acme()]),
      'app_1',
      [installIntent(), installIntent({ partner: 'organic', attribution_type: 'organic' }), installIntent({ partner: 'other' })],
      T0,
    );
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ partner: 'acme', kind: 'install', event_name: 'install', state: 'new', method: 'GET' });
    expect(records[0].url).toBe(`https://acme.example/pb?c=ext-1&e=install&r=0&f=&id=${records[0].postback_id}`);
  });

  it('sends configured events within the event window only', async () => {
    const configs = [acme({ events: 'install,purchase', eventWindowDays: 7 })];
    const records = await postbacksOf(
      ports(configs),
      'app_1',
      [eventIntent('purchase', DAY), eventIntent('purchase', 7 * DAY), eventIntent('purchase', 7 * DAY + 1), eventIntent('level_up', DAY)],
      T0,
    );
    expect(records.map((r) => [r.event_name, r.url.includes('r=4.99')])).toEqual([
      ['purchase', true],
      ['purchase', true],
    ]);
  });

  it('sends every event with *, and none for an event of an organic install', async () => {
    const all = [acme({ events: '*' })];
    expect(await postbacksOf(ports(all), 'app_1', [eventIntent('level_up', 1000), installIntent()], T0)).toHaveLength(2);
    expect(await postbacksOf(ports(all), 'app_1', [eventIntent('level_up', 1000, 'organic')], T0)).toHaveLength(0);
  });

  it('withholds a fraud-flagged install unless the partner asked for them, then marks it', async () => {
    const flagged = installIntent({ fraud_reasons: ['ctit_under_10s', 'click_injection'] });
    const [withheld] = await postbacksOf(ports([acme()]), 'app_1', [flagged], T0);
    expect(withheld).toMatchObject({ state: 'withheld', withheld_reason: 'fraud: ctit_under_10s,click_injection' });
    const [sent] = await postbacksOf(ports([acme({ sendFraud: true })]), 'app_1', [flagged], T0);
    expect(sent.state).toBe('new');
    expect(new URL(sent.url).searchParams.get('f')).toBe('ctit_under_10s,click_injection');
  });

  it('gives the same postback the same id every time, and POSTs the values as JSON when asked', async () => {
    const post = [acme({ method: 'post' })];
    const [a] = await postbacksOf(ports(post), 'app_1', [installIntent()], T0);
    const [b] = await postbacksOf(ports(post), 'app_1', [installIntent()], T0 + 5000);
    expect(a.postback_id).toBe(b.postback_id);
    expect(a.method).toBe('POST');
    expect(JSON.parse(a.body ?? '')).toMatchObject({
      click_id: 'ext-1',
      event_name: 'install',
      campaign: 'spring',
      sub1: 'a',
      postback_id: a.postback_id,
    });
    expect(a.body).not.toContain('u1');
  });

  it('writes micro-dollars as USD without float noise', () => {
    expect([usd(4_990_000), usd(1), usd(0), usd(12_000_000), usd(100_100)]).toEqual(['4.99', '0.000001', '0', '12', '0.1001']);
  });

  it('refuses a bad configuration with a clear message', () => {
    expect(() => acme({ events: 'install,bad name' })).toThrow(/"bad name" is not an event name/);
    expect(() => acme({ eventWindowDays: 91 })).toThrow(/0 to 90/);
    expect(() => acme({ method: 'PUT' })).toThrow(/GET or POST/);
    expect(() => postbackConfig('app_1', { partner: 'acme', url: 'https://acme.example/?x={ip}' }, T0)).toThrow(
      /--url: unknown macro \{ip\}/,
    );
  });

  it("withholds a postback the install's consent does not allow, names why, and passes Google's DMA values where the template asks", async () => {
    const dma = acme({
      events: 'install,purchase',
      url: 'https://acme.example/pb?id={postback_id}&eea={eea}&ap={ad_personalization}&ud={ad_user_data}',
      tcfVendorId: 755,
    });
    const withConsent = (consent: ConsentRecord | undefined): TriggerPorts => ({
      ...ports([dma]),
      consentsOf: async (_app, installs) => new Map(consent ? installs.map((install) => [install, consent]) : []),
    });
    const refused = { gdpr_applies: false, third_party_sharing: false, ts_ms: T0, event_id: 'c-1' };
    const [install, purchase] = await postbacksOf(withConsent(refused), 'app_1', [installIntent(), eventIntent('purchase', DAY)], T0);
    expect([install.state, purchase.state]).toEqual(['withheld', 'withheld']);
    expect(install.withheld_reason).toBe('consent: third_party_sharing refused');

    const granted = {
      gdpr_applies: true,
      third_party_sharing: true,
      ad_personalization: false,
      ad_user_data: true,
      ts_ms: T0,
      event_id: 'c-2',
    };
    const [sent] = await postbacksOf(withConsent(granted), 'app_1', [installIntent()], T0);
    expect(sent.state).toBe('new');
    expect(sent.url).toBe(`https://acme.example/pb?id=${sent.postback_id}&eea=1&ap=0&ud=1`);

    const [unknown] = await postbacksOf(withConsent(undefined), 'app_1', [installIntent()], T0);
    expect(unknown.state).toBe('new');
    expect(unknown.url).toBe(`https://acme.example/pb?id=${unknown.postback_id}&eea=&ap=&ud=`);
  });

  it('withholds for fraud before consent, and refuses a TCF vendor id out of range', async () => {
    const refused = { third_party_sharing: false, ts_ms: T0, event_id: 'c-1' };
    const [record] = await postbacksOf(
      { ...ports([acme()]), consentsOf: async () => new Map([['u1', refused]]) },
      'app_1',
      [installIntent({ fraud_reasons: ['ctit_under_10s'] })],
      T0,
    );
    expect(record.withheld_reason).toBe('fraud: ctit_under_10s');
    expect(() => acme({ tcfVendorId: 0 })).toThrow(/--tcf-vendor-id/);
    expect(() => acme({ tcfVendorId: 65_536 })).toThrow(/--tcf-vendor-id/);
    expect(acme({ tcfVendorId: 755 }).tcf_vendor_id).toBe(755);
  });
});

describe("the installs' consent for the postbacks of a call", () => {
  it('is read once for the call, for the installs owed a postback only, each named once', async () => {
    const reads: string[][] = [];
    const consents: TriggerPorts['consentsOf'] = async (_app, installs) => {
      reads.push([...installs]);
      return new Map([['u2', { third_party_sharing: false, ts_ms: T0, event_id: 'c-2' }]]);
    };
    const of = (installUuid: string, intent: PostbackIntent): PostbackIntent => ({ ...intent, installUuid });
    const records = await postbacksOf(
      { ...ports([acme({ events: 'install,purchase' })]), consentsOf: consents },
      'app_1',
      [
        of('u1', installIntent()),
        of('u1', eventIntent('purchase', DAY)),
        of('u2', installIntent()),
        of('u2', eventIntent('purchase', 2 * DAY)),
        // Owed nothing: organic, another partner, an event outside the window.
        of('u3', installIntent({ partner: 'organic', attribution_type: 'organic' })),
        of('u4', installIntent({ partner: 'other' })),
        of('u5', eventIntent('purchase', 400 * DAY)),
      ],
      T0,
    );
    expect(reads).toEqual([['u1', 'u2']]);
    expect(records.map((record) => [record.app_install === installKey('app_1', 'u1') ? 'u1' : 'u2', record.state])).toEqual([
      ['u1', 'new'],
      ['u1', 'new'],
      ['u2', 'withheld'],
      ['u2', 'withheld'],
    ]);
    // Nothing owed, nothing read.
    expect(
      await postbacksOf({ ...ports([acme()]), consentsOf: consents }, 'app_1', [of('u4', installIntent({ partner: 'other' }))], T0),
    ).toEqual([]);
    expect(reads).toHaveLength(1);
  });
});

describe('re-engagement postbacks (issue 37)', () => {
  const reengagement = (linkPartner: string): PostbackIntent => ({
    kind: 'reengagement',
    installUuid: 'u1',
    eventId: 'o-1',
    tsMs: T0 + 40 * DAY,
    link: { linkId: 'l-1', partner: linkPartner, campaign: 'winback', clickId: null },
    member: { id: 'i-1', ts_ms: T0, partner: 'organic' },
  });
  const withLink = (events: string) =>
    acme({ events, url: 'https://acme.example/pb?e={event_name}&l={link_id}&c={campaign}&k={click_id}&r={revenue_usd}' });

  it("sends event type reengagement to the link's partner, for an organic install and long after the install's event window", async () => {
    const organic = decision({ partner: 'organic', attribution_type: 'organic', ext_click_id: undefined, campaign: undefined });
    const records = await postbacksOf(ports([withLink('reengagement')]), 'app_1', [reengagement('acme')], T0);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ partner: 'acme', kind: 'reengagement', event_name: 'reengagement', state: 'new' });
    expect(records[0]?.url).toBe('https://acme.example/pb?e=reengagement&l=l-1&c=winback&k=&r=0');
    // The same with the install organic as the port reads it.
    const fromOrganic = await postbacksOf(
      { configs: async () => [withLink('reengagement')], installOf: async () => ({ decision: organic, platform: 'ios' }) },
      'app_1',
      [reengagement('acme')],
      T0,
    );
    expect(fromOrganic).toHaveLength(1);
  });

  it('sends none to a partner whose events leave reengagement out, or to another partner', async () => {
    expect(await postbacksOf(ports([withLink('install,purchase')]), 'app_1', [reengagement('acme')], T0)).toEqual([]);
    expect(await postbacksOf(ports([withLink('reengagement')]), 'app_1', [reengagement('other')], T0)).toEqual([]);
  });

  it("is not withheld for the install's fraud flags, which say nothing of a later open", async () => {
    const records = await postbacksOf(
      ports([withLink('*')], decision({ fraud_reasons: ['ctit_under_10s'] })),
      'app_1',
      [reengagement('acme')],
      T0,
    );
    expect(records[0]?.state).toBe('new');
  });
});
