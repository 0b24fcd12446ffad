// When to restart a server of the local stack that exited on its own: after a delay that
// doubles with each restart in the recent window (1 s, 2 s, 4 s, ... at most 30 s), and no
// more once it was restarted too often in that window: then it keeps crashing and a human
// has to look at its log.
export interface RestartPolicy {
  firstDelayMs: number;
  maxDelayMs: number;
  maxRestarts: number;
  windowMs: number;
}

export const RESTART_POLICY: RestartPolicy = {
  firstDelayMs: 1000,
  maxDelayMs: 30_000,
  maxRestarts: 5,
  windowMs: 120_000,
};

/** `restarts`: when the restarts still in the window happened, this one included if it is made. */
export type RestartDecision =
  { giveUp: false; delayMs: number; restarts: number[] } | { giveUp: true; restarts: number[] };

/** `previous`: when the earlier restarts happened (epoch ms); `now`: when the server exited. */
export function nextRestart(
  previous: readonly number[],
  now: number,
  policy: RestartPolicy = RESTART_POLICY,
): RestartDecision {
  const recent = previous.filter((t) => now - t < policy.windowMs);
  if (recent.length >= policy.maxRestarts) return { giveUp: true, restarts: recent };
  return {
    giveUp: false,
    delayMs: Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** recent.length),
    restarts: [...recent, now],
  };
}
