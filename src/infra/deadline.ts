// A promise given a deadline: its value, or a rejection once the time is up (the work it stands
// for goes on; only the wait for it ends).

/** `p`, or a rejection once `ms` went by without its answer. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
