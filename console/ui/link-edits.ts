/**
 * What the link edit form sends to `link update`: the settings whose value changed, a field
 * emptied as `''`, which link update takes as "clear it" (`--deep-link-value ''`, `--web-url ''`).
 * The lookback has no empty form (every link has one), so a blank lookback changes nothing.
 */
const NOT_CLEARABLE: ReadonlySet<string> = new Set(['lookback-days']);

export function linkEdits(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string | boolean | undefined>>,
): Record<string, string> {
  const edits: Record<string, string> = {};
  for (const [flag, was] of Object.entries(before)) {
    const now = after[flag];
    const value = typeof now === 'string' ? now : '';
    if (value === was || (value === '' && NOT_CLEARABLE.has(flag))) continue;
    edits[flag] = value;
  }
  return edits;
}
