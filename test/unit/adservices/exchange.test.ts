import { answerOf } from '../../../functions/domain/adservices/answers';
import { type AdServicesApi, exchangeToken } from '../../../functions/domain/adservices/exchange';

/** An API answering a script of statuses (or 'network' for no answer), one per request. */
function scripted(script: readonly (number | 'network')[], body: unknown = { attribution: false }) {
  let calls = 0;
  const api: AdServicesApi = {
    post: async () => {
      const step = script[Math.min(calls++, script.length - 1)];
      if (step === 'network') throw new Error('socket hang up');
      return { status: step ?? 500, body: step === 200 ? body : undefined };
    },
  };
  const waits: number[] = [];
  const options = { retries: 3, delayMs: 5_000, sleep: async (ms: number) => void waits.push(ms) };
  return { api, options, waits, calls: () => calls };
}

const CLAIM = {
  attribution: true,
  orgId: 40669820,
  campaignId: 542370539,
  conversionType: 'Download',
  clickDate: '2020-04-08T17:17Z',
  adGroupId: 542317095,
  countryOrRegion: 'US',
  keywordId: 87675432,
  adId: 542317136,
};

describe('exchanging an AdServices token', () => {
  it('asks again after each 404, 5 s apart, and takes the 200 that follows', async () => {
    const run = scripted([404, 404, 200], CLAIM);
    await expect(exchangeToken(run.api, 't', run.options)).resolves.toMatchObject({ outcome: 'attributed' });
    expect(run.calls()).toBe(3);
    expect(run.waits).toEqual([5_000, 5_000]);
  });

  it('retries 5xx and lost requests 3 times, then decides without an answer (unavailable)', async () => {
    const run = scripted([503, 'network', 500, 502, 200], CLAIM);
    await expect(exchangeToken(run.api, 't', run.options)).resolves.toEqual({ outcome: 'unavailable' });
    expect(run.calls()).toBe(4);
    expect(run.waits).toHaveLength(3);
  });

  it('takes 400 as a bad token at once, without a retry', async () => {
    const run = scripted([400, 200], CLAIM);
    await expect(exchangeToken(run.api, 't', run.options)).resolves.toEqual({ outcome: 'bad_token' });
    expect(run.calls()).toBe(1);
    expect(run.waits).toEqual([]);
  });

  it('does not retry a status Apple does not document as passing (403)', async () => {
    const run = scripted([403, 200], CLAIM);
    await expect(exchangeToken(run.api, 't', run.options)).resolves.toEqual({ outcome: 'unavailable' });
    expect(run.calls()).toBe(1);
  });

  it("reads `attribution: false` as not attributed, and a claim's ids and click date", async () => {
    const run = scripted([200], { attribution: false });
    await expect(exchangeToken(run.api, 't', run.options)).resolves.toEqual({ outcome: 'not_attributed' });
    expect(answerOf(CLAIM)).toEqual({
      outcome: 'attributed',
      apple_ads: {
        campaign_id: 542370539,
        ad_group_id: 542317095,
        keyword_id: 87675432,
        ad_id: 542317136,
        org_id: 40669820,
        country_or_region: 'US',
        click_ms: Date.UTC(2020, 3, 8, 17, 17),
      },
    });
  });

  it.each([
    ['not an object', 'attributed'],
    ['no attribution flag', { campaignId: 1 }],
    ['a claim without its campaign', { ...CLAIM, campaignId: undefined }],
    ['a claim with a click date that is no date', { ...CLAIM, clickDate: 'yesterday' }],
  ])('reads a 200 body that is %s as unavailable', (_what, body) => {
    expect(answerOf(body)).toEqual({ outcome: 'unavailable' });
  });

  it('keeps a claim without keyword (a Search tab ad) and ad ids', () => {
    const { keywordId: _k, adId: _a, ...searchTab } = CLAIM;
    expect(answerOf(searchTab).apple_ads).not.toHaveProperty('keyword_id');
    expect(answerOf(searchTab).outcome).toBe('attributed');
  });
});
