/** What the bench's phases share: how a figure is reported, and a small worker pool. */

export type Figure = number | string | Readonly<Record<string, number>> | readonly Readonly<Record<string, number | string>>[];
/** One line of the bench table, and the figures it stands for in --json output. */
export type Report = (name: string, figure: string, figures: Readonly<Record<string, Figure>>) => void;

/** Runs `work` on every item, at most `limit` at a time. */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
