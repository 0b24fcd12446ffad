import { DefaultLogger } from '@temporalio/worker';
import { NativeLogCollector } from '@temporalio/worker/lib/runtime-logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LOG_PASS_MS, SDK_LOG_PASS_MS, withLogPass } from '../../src/workers/log-pass';

/** The intervals of the timers a new log collector starts. */
function collectorTimers(make: (fn: () => NativeLogCollector) => NativeLogCollector): number[] {
  const spy = vi.spyOn(globalThis, 'setInterval');
  const collector = make(() => new NativeLogCollector(new DefaultLogger('INFO', () => undefined)));
  clearInterval((collector as unknown as { flushIntervalTimer: NodeJS.Timeout }).flushIntervalTimer);
  const intervals = spy.mock.calls.map((c) => c[1] ?? 0);
  spy.mockRestore();
  return intervals;
}

describe('the SDK log collector’s pass', () => {
  afterEach(() => vi.restoreAllMocks());

  it('runs every 100 ms in the SDK as it is (when this fails, the SDK changed it: see src/workers/log-pass.ts)', () => {
    expect(collectorTimers((make) => make())).toEqual([SDK_LOG_PASS_MS]);
  });

  it('runs once a second in a Runtime installed here, and other timers keep their interval', () => {
    expect(collectorTimers((make) => withLogPass(make))).toEqual([LOG_PASS_MS]);
    const spy = vi.spyOn(globalThis, 'setInterval');
    withLogPass(() => clearInterval(setInterval(() => undefined, 250)));
    expect(spy.mock.calls.map((c) => c[1])).toEqual([250]);
    expect(globalThis.setInterval).toBe(spy);
  });
});
