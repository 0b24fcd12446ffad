// The SDK's log collector (what the Runtime forwards: Core's lines, the SDK's own and ours, put
// in time order) passes over its buffer every 100 ms, whether it holds anything or not: ten
// wake-ups a second: the idle worker's main thread spent 0.18 CPU-s a minute, 0.06 with the
// pass once a second, 0.01 with it once every 100 s (bench/idle-baseline.ts). Core hands its
// lines over by itself every 10 ms when it has any, and a pass then goes with them; the timer
// only writes out lines logged from JavaScript that nothing else came after. The SDK has no
// setting for it: its collector is made while the Runtime is installed, and this makes its timer
// pass once a second (a line logged from JavaScript is written within a second; the Runtime
// flushes everything when it shuts down).

/** The SDK's pass interval (`NativeLogCollector.flushPassIntervalMs`): test/unit/log-pass.test.ts tells when it changes. */
export const SDK_LOG_PASS_MS = 100;

/** How often the collector passes over its buffer here. */
export const LOG_PASS_MS = 1_000;

/** Runs `install` (the Runtime's), the SDK's log pass timer it starts running every `passMs`. */
export function withLogPass<T>(install: () => T, passMs = LOG_PASS_MS): T {
  const original = globalThis.setInterval;
  // What the Runtime's installation starts takes no arguments of its own.
  const slower = (fn: () => void, ms?: number): NodeJS.Timeout => original(fn, ms === SDK_LOG_PASS_MS ? passMs : ms);
  globalThis.setInterval = slower;
  try {
    return install();
  } finally {
    globalThis.setInterval = original;
  }
}
