// What the Temporal UI shows of a rollout (its current details, markdown): the phase, what it
// means, and each wave's counts. Pure.
import type { RolloutProgress } from '../contract/rollout';

export function rolloutDetails(p: RolloutProgress): string {
  const head = `**${p.module}** on **${p.channel}**${p.version ? ` → ${p.version}` : ''}${p.from ? ` (from ${p.from})` : ''}: **${p.phase}**\n\n${p.message}`;
  if (p.waves.length === 0) return head;
  const rows = p.waves.map(
    (w, i) =>
      `| ${i + 1}${i === p.wave ? ' ◀' : ''} | ${w.size} | ${w.done} | ${w.failed} | ${w.upgrading} | ${w.pending} |`,
  );
  const failed = p.failed.slice(0, 10).map((f) => `- ${f.kyma}: ${f.message}`);
  return [
    head,
    '',
    '| wave | Kymas | done | failed | upgrading | pending |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    ...(failed.length ? ['', 'failed:', ...failed] : []),
  ].join('\n');
}
