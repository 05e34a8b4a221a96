/**
 * Which figure columns a table shows (docs/console-analytics.md, "Breakdown"): the user's choice,
 * remembered per user and app in localStorage, else a default a marketer reads every morning.
 * DOM-free (the storage is a parameter), so the unit tests run it in node.
 */

/** What the choice needs of localStorage (written out: node's tests have no DOM types). */
export interface ChoiceStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The user a choice belongs to when the console has no sign-in (the local console). */
export const LOCAL_USER = 'local';

/**
 * The storage key of a table's choice: per table, user and app, each URL-encoded between slashes
 * (which encoding turns into %2F), so no name can reach another's key.
 */
export const choiceKey = (table: string, user: string, appKey: string): string =>
  `console.columns/${[table, user, appKey].map(encodeURIComponent).join('/')}`;

/**
 * The columns shown, in the table's order: the stored choice of the columns that still exist, else
 * the defaults. A stored value that is not a list of names (edited by hand, an older console) is
 * ignored, as is a choice that keeps no column at all.
 */
export function chosenColumns(
  storage: ChoiceStorage | undefined,
  key: string,
  all: readonly string[],
  defaults: readonly string[],
): string[] {
  let stored: unknown;
  try {
    stored = JSON.parse(storage?.getItem(key) ?? 'null');
  } catch {
    stored = null;
  }
  const names = Array.isArray(stored) ? new Set(stored.filter((name): name is string => typeof name === 'string')) : undefined;
  const shown = names ? all.filter((name) => names.has(name)) : [];
  return shown.length ? shown : all.filter((name) => defaults.includes(name));
}

/** Stores a choice (the defaults again when it is empty: the key is removed). */
export function storeChoice(storage: ChoiceStorage | undefined, key: string, shown: readonly string[]): void {
  if (!storage) return;
  if (shown.length === 0) storage.removeItem(key);
  else storage.setItem(key, JSON.stringify(shown));
}
