/**
 * The order of a pool's batches, as [install, batch] pairs: waves of `wave` installs, every batch
 * of a wave's installs (batch b of each before batch b + 1 of any), then the next wave. A load
 * that takes only the start of the pool then sends what the pool is made of.
 */
export function poolOrder(installs: number, batchesPerInstall: number, wave: number): [number, number][] {
  const order: [number, number][] = [];
  for (let first = 0; first < installs; first += wave) {
    const last = Math.min(first + wave, installs);
    for (let batch = 0; batch < batchesPerInstall; batch++)
      for (let install = first; install < last; install++) order.push([install, batch]);
  }
  return order;
}
