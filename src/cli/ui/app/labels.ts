// What the page writes: the texts and classes of its cells, from the server's answers.
import type { Blocker, CatalogEntry, ModuleRow, RolloutProgress, SteerAction, Why } from './types';

/** The class of a state's text (colored by style.css). */
export function stateClass(state: string | undefined): string {
  return 'state state-' + (state || '');
}

/** How a module came: through the Kyma (managed or not), or installed directly (community or not). */
export function kindOf(r: Pick<ModuleRow, 'direct' | 'managed'>): string {
  if (r.direct) return r.direct.community ? 'community' : 'direct';
  return r.managed ? 'managed' : 'unmanaged';
}

export function blockerText(b: Blocker): string {
  return b.kind + ' ' + (b.namespace ? b.namespace + '/' : '') + b.name;
}

/** Why's line of versions: installed, wanted, and from which channel. */
export function versionsText(w: Pick<Why, 'installedVersion' | 'desiredVersion' | 'channel'>): string {
  const channel = w.channel ? ' (channel ' + w.channel + ')' : '';
  return 'Installed: ' + (w.installedVersion || '-') + '; wanted: ' + (w.desiredVersion || '-') + channel;
}

export function eventText(e: Why['events'][number]): string {
  return (e.lastTimestamp || '') + ' ' + e.reason + ': ' + e.message;
}

/** A channel of the catalog's choice: its version, and why the Kyma cannot install it if so. */
export function channelOption(e: CatalogEntry, channel: string): { text: string; title?: string } {
  const problem = e.channelProblems?.[channel];
  const text = channel + ' (' + e.channels[channel] + (problem ? ': ' + problem.reason : '') + ')';
  return problem ? { text, title: problem.message } : { text };
}

/** The origin badge of a catalog entry. */
export function originBadge(e: Pick<CatalogEntry, 'origin'>): { class: string; text: string } {
  return e.origin !== 'kyma'
    ? { class: 'badge community', text: 'community ' + e.origin }
    : { class: 'badge', text: 'managed' };
}

/** A rollout's version, and the one it replaces. */
export function rolloutVersion(p: RolloutProgress | undefined): string {
  return p ? (p.version || '-') + (p.from ? ' (from ' + p.from + ')' : '') : '-';
}

/** A rollout's waves as done/size. */
export function wavesText(p: RolloutProgress | undefined): string {
  return p ? p.waves.map((w) => w.done + '/' + w.size).join('  ') : '';
}

export function steerQuestion(action: SteerAction, r: { module: string; channel: string }): string {
  return action[0]!.toUpperCase() + action.slice(1) + ' the rollout of ' + r.module + ' on ' + r.channel + '?';
}
