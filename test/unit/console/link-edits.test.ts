import { linkEdits } from '../../../console/ui/link-edits';

describe("the edit form's changes to a link", () => {
  const before = {
    campaign: 'spring',
    'web-url': 'https://example.com/a',
    'lookback-days': '7',
    'deep-link-value': 'cart',
    'deep-link-sub2': '',
  };

  it('sends a cleared field as an empty value, which link update takes as "clear"', () => {
    expect(linkEdits(before, { campaign: 'spring', 'lookback-days': '7', 'web-url': undefined, 'deep-link-value': undefined })).toEqual({
      'web-url': '',
      'deep-link-value': '',
    });
  });

  it('sends only what changed, and never clears a setting that has no empty form (the lookback)', () => {
    expect(linkEdits(before, { ...before, 'deep-link-sub2': 'two', 'lookback-days': undefined })).toEqual({ 'deep-link-sub2': 'two' });
    expect(linkEdits(before, { ...before, 'deep-link-sub2': undefined })).toEqual({});
  });
});
