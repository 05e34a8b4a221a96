/**
 * The one worker pool of the repository: runs `work` on every item, at most `limit` at a time,
 * items taken in order. After a failure no new item starts, and the first failure is thrown only
 * once the running ones have settled, so nothing started still runs when the caller goes on (a
 * failed aggregation delivery gives its lease back only when none of its writes is in flight).
 */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = items.values();
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    for (let next = queue.next(); !next.done && !failure; next = queue.next()) {
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}
