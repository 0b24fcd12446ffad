// One drift timer for a Kyma and its hosted modules: each firing wakes every user once.
import { describe, expect, it } from 'vitest';
import { SharedDrift } from '../../src/workflows/shared-drift';
import type { LoopTimer } from '../../src/workflows/wake-timer';

/** A timer that fires when the test says so, counting how often it was started. */
class FakeTimer implements LoopTimer {
  starts = 0;
  private state: 'idle' | 'running' | 'due' = 'idle';
  arm(): void {
    if (this.state !== 'idle') return;
    this.state = 'running';
    this.starts++;
  }
  fire(): void {
    this.state = 'due';
  }
  cancel(): void {
    this.state = 'idle';
  }
  fired(): boolean {
    return this.state === 'due';
  }
  take(): boolean {
    const was = this.fired();
    if (was) this.state = 'idle';
    return was;
  }
}

describe('a drift timer shared by a Kyma and its modules', () => {
  it('runs one timer for all its users and wakes each of them once per firing', () => {
    const timer = new FakeTimer();
    const drift = new SharedDrift(timer);
    const [kyma, greeter, counter] = [drift.user(), drift.user(), drift.user()];
    for (const u of [kyma, greeter, counter]) u.arm(600_000);
    expect(timer.starts).toBe(1);
    timer.fire();
    expect([kyma.fired(), greeter.fired(), counter.fired()]).toEqual([true, true, true]);
    expect(kyma.take()).toBe(true);
    expect(kyma.take()).toBe(false);
    // The Kyma arms it again at once; the modules still see their firing until they take it.
    kyma.arm(600_000);
    expect(timer.starts).toBe(2);
    expect([greeter.take(), counter.take()]).toEqual([true, true]);
    greeter.arm(600_000);
    expect(timer.starts).toBe(2);
  });

  it('does not start again for a user that has not taken its firing', () => {
    const timer = new FakeTimer();
    const drift = new SharedDrift(timer);
    const module = drift.user();
    module.arm(1);
    timer.fire();
    module.arm(1);
    expect(timer.starts).toBe(1);
    module.take();
    module.arm(1);
    expect(timer.starts).toBe(2);
  });

  it('lets a user that stops forget its firing while the timer runs on for the others', () => {
    const timer = new FakeTimer();
    const drift = new SharedDrift(timer);
    const [kyma, removed] = [drift.user(), drift.user()];
    kyma.arm(1);
    timer.fire();
    removed.cancel();
    expect([kyma.fired(), removed.fired()]).toEqual([true, false]);
    expect(timer.starts).toBe(1);
    // A user made after a firing does not see it.
    expect(drift.user().fired()).toBe(false);
  });
});
