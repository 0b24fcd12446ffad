// Writes to a cluster a few at a time: enough to be quick, few enough not to crowd its API server.
const CONCURRENCY = 8;

/** Runs `fn` over `items`, at most `concurrency` at once; the first failure fails the whole. */
export async function inBatches<T>(
  items: T[],
  fn: (item: T) => Promise<unknown>,
  concurrency = CONCURRENCY,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}
