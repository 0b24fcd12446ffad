// What a rollout shows: its plan (the `plan` query, `klm rollout plan`) and its progress (the
// `progress` query, its search attributes and the UI's details), read from the rollout as it stands.
import type { ChannelRef, RolloutPlanView, RolloutProgress, WaveProgress } from '../contract/rollout';
import type { KymaEntry, RolloutStanding } from './rollout-carry';

/** The plan of the version rolling; null before one is planned. */
export function rolloutPlanView(channel: ChannelRef, r: RolloutStanding): RolloutPlanView | null {
  if (!r.version || !r.policy) return null;
  return {
    module: channel.module,
    channel: channel.channel,
    version: r.version,
    from: r.from,
    policy: r.policy,
    waves: r.waves,
    diff: r.diff,
  };
}

export function rolloutProgress(channel: ChannelRef, r: RolloutStanding): RolloutProgress {
  return {
    module: channel.module,
    channel: channel.channel,
    version: r.version ?? '',
    from: r.from,
    phase: r.phase,
    message: r.message,
    waves: r.waves.map((wave) => waveProgress(wave, r.kymas)),
    wave: r.wave,
    // In the order of the waves, as a run that continued as new has them.
    failed: r.waves.flat().flatMap((kyma) => {
      const k = r.kymas.get(kyma)!;
      return k.phase === 'failed' ? [{ kyma, message: k.message ?? '' }] : [];
    }),
    policy: r.policy,
    actions: r.actions,
  };
}

function waveProgress(wave: string[], kymas: Map<string, KymaEntry>): WaveProgress {
  const p: WaveProgress = { size: wave.length, done: 0, failed: 0, upgrading: 0, pending: 0 };
  for (const name of wave) {
    const phase = kymas.get(name)!.phase;
    p[phase === 'done' ? 'done' : phase === 'failed' ? 'failed' : phase === 'upgrading' ? 'upgrading' : 'pending']++;
  }
  return p;
}
