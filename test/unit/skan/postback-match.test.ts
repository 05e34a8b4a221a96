import { APPLE_KEYS } from '../../../functions/domain/skan/postback-keys';
import { appStoreIdOfUrl, matchPostback, partnerOf, postbackFactsOf, type SkanApp } from '../../../functions/domain/skan/postback-match';
import { judgePostback } from '../../../functions/domain/skan/postback-record';
import { AAK_EXAMPLE, aakPayload, aakPostback, changed, keysWith, p256, SKADNETWORK_EXAMPLES, signJws } from './postbacks';

const NOW = Date.parse('2025-03-10T12:00:00Z');
const example = (name: string) => SKADNETWORK_EXAMPLES.find((e) => e.name.startsWith(name))!.postback;
const judged = (body: Record<string, unknown>, keys = APPLE_KEYS) => judgePostback(body, keys, NOW)!;
const APP: SkanApp = { app_id: 'app1', time_zone: 'UTC', skan_networks: { 'example123.skadnetwork': 'meta' } };
const apps = async (id: string) => (id === '525463029' ? APP : undefined);

describe('App Store ids', () => {
  it.each([
    ['https://apps.apple.com/us/app/example/id1234567890', '1234567890'],
    ['https://apps.apple.com/app/id42/', '42'],
    ['https://itunes.apple.com/de/app/x/id525463029?mt=8', '525463029'],
    ['https://apps.apple.com/us/app/example', undefined],
    ['https://play.google.com/store/apps/details?id=123', undefined],
    ['https://evil.example/apps.apple.com/id123', undefined],
    ['not a url', undefined],
    [undefined, undefined],
  ])('reads the id of %s as %s', (url, id) => {
    expect(appStoreIdOfUrl(url)).toBe(id);
  });
});

describe('postback facts', () => {
  it("reads Apple's 4.0 fine example: its app, network, source identifier, window 0, fidelity 1, a download with fine value 63", () => {
    expect(postbackFactsOf(judged(example('4.0 web ad, high')))).toEqual({
      appStoreId: '525463029',
      adNetworkId: 'com.example',
      dims: { source_identifier: '5239', postback_sequence_index: 0, fidelity_type: 1, conversion_type: 'download' },
      fine: 63,
    });
  });

  it("reads Apple's 4.0 coarse example's coarse value and no fine one", () => {
    const facts = postbackFactsOf(judged(example('4.0 web ad, low')));
    expect([facts.fine, facts.coarse, facts.dims.source_identifier]).toEqual([undefined, 'high', '39']);
  });

  it('takes the campaign id as the source identifier before 4.0, and a redownload as such', () => {
    const facts = postbackFactsOf(judged(example('3.0 winning')));
    expect(facts.dims).toEqual({ source_identifier: '42', postback_sequence_index: 0, fidelity_type: 1, conversion_type: 'redownload' });
    expect(facts.fine).toBe(20);
  });

  it('reads no unsigned dimension of a verified postback: an added sequence index beside a 3.0 signature is window 0', () => {
    const record = judged(changed(example('3.0 winning'), { 'postback-sequence-index': 2 }));
    expect(record.verified).toBe(true);
    expect(postbackFactsOf(record).dims.postback_sequence_index).toBe(0);
  });

  it('reads an invalid postback as sent, its dimensions cut to 64 characters', () => {
    const record = judged(changed(example('4.0 web ad, low'), { 'source-identifier': 'x'.repeat(200), 'postback-sequence-index': 1 }));
    expect(record.verified).toBe(false);
    const facts = postbackFactsOf(record);
    expect([facts.dims.source_identifier.length, facts.dims.postback_sequence_index, facts.appStoreId]).toEqual([64, 1, '525463029']);
  });

  it('reads an AdAttributionKit payload: advertised item, app-impression as fidelity 1, its conversion type', () => {
    const facts = postbackFactsOf(judged(AAK_EXAMPLE.postback));
    expect(facts).toMatchObject({
      appStoreId: '10738027756',
      adNetworkId: 'development.adattributionkit',
      dims: { source_identifier: '1234', postback_sequence_index: 0, fidelity_type: 1, conversion_type: 're-engagement' },
      fine: 24,
    });
  });

  it('takes a fine value only from 0 to 63 and a coarse value only from low, medium, high', () => {
    const facts = postbackFactsOf(
      judged(changed(example('4.0 web ad, high'), { 'conversion-value': 64, 'coarse-conversion-value': 'huge' })),
    );
    expect([facts.fine, facts.coarse]).toEqual([undefined, undefined]);
  });
});

describe('matching a postback to its app and partner', () => {
  it('maps the ad network id to the app’s partner, and reports an unmapped id as itself', async () => {
    expect(partnerOf(APP.skan_networks, 'example123.skadnetwork')).toBe('meta');
    expect(partnerOf(APP.skan_networks, 'com.example')).toBe('com.example');
    expect(partnerOf(undefined, 'toString')).toBe('toString');
    const mapped = await matchPostback(judged(example('3.0 winning')), apps);
    expect(mapped).toMatchObject({ kind: 'count', dims: { partner: 'meta' } });
    expect(await matchPostback(judged(example('4.0 web ad, high')), apps)).toMatchObject({
      kind: 'count',
      dims: { partner: 'com.example' },
    });
  });

  it('counts a tampered postback of a known app only as invalid, and leaves an unknown app’s postback out', async () => {
    expect(await matchPostback(judged(changed(example('4.0 web ad, high'), { 'did-win': false })), apps)).toMatchObject({
      kind: 'invalid',
    });
    expect(await matchPostback(judged(example('2.0 (P-192)')), apps)).toEqual({ kind: 'unknown_app' });
  });

  it("leaves out AdAttributionKit postbacks signed with Apple's development key, and counts a production one", async () => {
    const byId = async () => APP;
    expect(await matchPostback(judged(AAK_EXAMPLE.postback), byId)).toEqual({ kind: 'development' });
    const { publicKey, privateKey } = p256();
    const keys = keysWith('test/0', publicKey, 'production');
    const jws = signJws({ kid: 'test/0', alg: 'ES256' }, aakPayload('ID-1'), privateKey);
    expect(await matchPostback(judged(aakPostback(jws), keys), byId)).toMatchObject({ kind: 'count' });
  });
});
