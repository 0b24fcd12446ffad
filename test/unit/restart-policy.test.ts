import { describe, expect, it } from 'vitest';
import { nextRestart, RESTART_POLICY, type RestartDecision } from '../../src/localstack/restart-policy';

/** Feeds exits at the given times through the policy, as the supervisor does. */
function decide(exits: number[], policy = RESTART_POLICY): RestartDecision[] {
  let restarts: number[] = [];
  return exits.map((t) => {
    const d = nextRestart(restarts, t, policy);
    restarts = d.restarts;
    return d;
  });
}

describe('the restart policy of the local stack', () => {
  it('restarts after 1 s, doubling with each restart in the window, and gives up at the sixth exit within 2 min', () => {
    const decisions = decide([0, 1_000, 3_000, 7_000, 15_000, 31_000]);
    expect(decisions.map((d) => (d.giveUp ? 'give up' : d.delayMs))).toEqual([
      1000,
      2000,
      4000,
      8000,
      16000,
      'give up',
    ]);
  });

  it('caps the delay at 30 s', () => {
    const decisions = decide([0, 1, 2, 3, 4, 5, 6], { ...RESTART_POLICY, maxRestarts: 10 });
    expect(decisions.map((d) => !d.giveUp && d.delayMs)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it('forgets restarts older than the window: only recent restarts lengthen the delay', () => {
    const [, second, third] = decide([0, 60_000, 170_000]);
    expect(second).toEqual({ giveUp: false, delayMs: 2000, restarts: [0, 60_000] });
    expect(third).toEqual({ giveUp: false, delayMs: 2000, restarts: [60_000, 170_000] });
  });
});
