// An index of the fleet: which Kymas use which module on which channel (or pin it at which
// version), per namespace, with the last-seen ModuleReleaseMeta of each module. The bridge keeps
// it from its watches and asks it which Kymas a ModuleTemplate or ModuleReleaseMeta event
// affects, so that such an event signals those Kymas and not the whole namespace. Pure: no
// Temporal, no Kubernetes client. It routes signals only; it decides nothing about a Kyma.
//
// Resolution (src/decisions/resolution.ts) is what it mirrors: a module's channel is its own,
// else the Kyma's, else "regular"; its version is a pin, else the ModuleReleaseMeta's mandatory
// version, else the channel's; its template is `<module>-<version>`; the ModuleReleaseMeta's
// ocmComponentName is read by pinned modules too. A mandatory ModuleReleaseMeta (not being
// deleted) gives its module to every Kyma of the namespace, on the channel "mandatory". When
// unsure, it names a Kyma rather than miss it.
import type { Kyma } from '../api/kyma';
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import { effectiveChannel, MANDATORY_CHANNEL } from '../api/shared';

/** How a Kyma uses one module: on a channel, or pinned at a version. */
export type ModuleUse =
  { module: string; channel: string; version?: undefined } | { module: string; version: string; channel?: undefined };

/** What of a ModuleReleaseMeta resolution reads. */
interface MetaSnapshot {
  ocmComponentName?: string;
  mandatory?: string;
  channels: Map<string, string>;
}

/** The users of one module in one namespace. */
interface ModuleUsers {
  /** channel → Kymas using the module on it. */
  channels: Map<string, Set<string>>;
  /** version → Kymas pinning the module at it. */
  pins: Map<string, Set<string>>;
}

interface NamespaceIndex {
  /** Kyma → its module uses, as last recorded. */
  kymas: Map<string, ModuleUse[]>;
  modules: Map<string, ModuleUsers>;
  metas: Map<string, MetaSnapshot>;
}

/** The module uses of a Kyma's spec. */
export function moduleUses(spec: Pick<Kyma['spec'], 'channel' | 'modules'>): ModuleUse[] {
  return (spec.modules ?? []).map((m) =>
    m.version
      ? { module: m.name, version: m.version }
      : { module: m.name, channel: effectiveChannel(m.channel, spec.channel) },
  );
}

function snapshot(meta: ModuleReleaseMeta): MetaSnapshot {
  return {
    ...(meta.spec.ocmComponentName ? { ocmComponentName: meta.spec.ocmComponentName } : {}),
    // Being deleted, it is mandatory no more: the module leaves every Kyma.
    ...(meta.spec.mandatory?.version && !meta.metadata.deletionTimestamp
      ? { mandatory: meta.spec.mandatory.version }
      : {}),
    channels: new Map((meta.spec.channels ?? []).map((c) => [c.channel, c.version])),
  };
}

/** What a ModuleReleaseMeta's change means: the Kymas to poke, the channels promoted. */
interface MetaChange {
  poke: Set<string>;
  promotions: { channel: string; version: string }[];
}

/** Made or no longer mandatory: every Kyma of the namespace is poked; a new mandatory version is a promotion on "mandatory". */
function mandatoryChanged(
  n: NamespaceIndex,
  before: MetaSnapshot | undefined,
  after: MetaSnapshot | undefined,
  change: MetaChange,
): void {
  if (before?.mandatory === after?.mandatory) return;
  if (before?.mandatory === undefined || after?.mandatory === undefined)
    for (const k of n.kymas.keys()) change.poke.add(k);
  if (after?.mandatory !== undefined) change.promotions.push({ channel: MANDATORY_CHANNEL, version: after.mandatory });
}

/**
 * What the change means for the module's users: added, deleted or another ocmComponentName,
 * every user (and each used channel's version); else the channels that moved, and the Kymas on
 * channels that gained or lost their version (or have none while the set of channels changed).
 */
function usersChanged(
  users: ModuleUsers,
  before: MetaSnapshot | undefined,
  after: MetaSnapshot | undefined,
  change: MetaChange,
): void {
  if (!before || !after || before.ocmComponentName !== after.ocmComponentName) {
    for (const set of [...users.channels.values(), ...users.pins.values()]) for (const k of set) change.poke.add(k);
    if (after) change.promotions.push(...channelVersions(after, users));
    return;
  }
  const channelsChanged = !sameKeys(before.channels, after.channels);
  for (const [channel, kymas] of users.channels) {
    const [was, is] = [versionOn(before, channel), versionOn(after, channel)];
    if (was !== undefined && is !== undefined && was !== is) change.promotions.push({ channel, version: is });
    else if (was !== is || (is === undefined && channelsChanged)) for (const k of kymas) change.poke.add(k);
  }
}

/** Each channel with users and the version it takes under `meta`. */
function channelVersions(meta: MetaSnapshot, users: ModuleUsers): { channel: string; version: string }[] {
  return [...users.channels.keys()].flatMap((channel) => {
    const version = versionOn(meta, channel);
    return version === undefined ? [] : [{ channel, version }];
  });
}

/** The version resolution takes for a channel under a ModuleReleaseMeta (undefined: none). */
function versionOn(meta: MetaSnapshot, channel: string): string | undefined {
  return meta.mandatory ?? meta.channels.get(channel);
}

function sameKeys(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a.keys()].every((k) => b.has(k));
}

function add(map: Map<string, Set<string>>, key: string, kyma: string): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(kyma);
}

function remove(map: Map<string, Set<string>>, key: string, kyma: string): void {
  const set = map.get(key);
  set?.delete(kyma);
  if (set?.size === 0) map.delete(key);
}

export class FleetIndex {
  private readonly namespaces = new Map<string, NamespaceIndex>();

  private ns(namespace: string): NamespaceIndex {
    let n = this.namespaces.get(namespace);
    if (!n) this.namespaces.set(namespace, (n = { kymas: new Map(), modules: new Map(), metas: new Map() }));
    return n;
  }

  /** Records a Kyma as it is now (added or modified). */
  setKyma(namespace: string, name: string, spec: Pick<Kyma['spec'], 'channel' | 'modules'>): void {
    this.deleteKyma(namespace, name);
    const n = this.ns(namespace);
    const uses = moduleUses(spec);
    n.kymas.set(name, uses);
    for (const use of uses) {
      let users = n.modules.get(use.module);
      if (!users) n.modules.set(use.module, (users = { channels: new Map(), pins: new Map() }));
      if (use.version !== undefined) add(users.pins, use.version, name);
      else add(users.channels, use.channel, name);
    }
  }

  /** Forgets a deleted Kyma. */
  deleteKyma(namespace: string, name: string): void {
    const n = this.namespaces.get(namespace);
    const uses = n?.kymas.get(name);
    if (!n || !uses) return;
    n.kymas.delete(name);
    for (const use of uses) {
      const users = n.modules.get(use.module);
      if (!users) continue;
      if (use.version !== undefined) remove(users.pins, use.version, name);
      else remove(users.channels, use.channel, name);
      if (!users.channels.size && !users.pins.size) n.modules.delete(use.module);
    }
  }

  /** How many Kymas of the namespace are indexed (what a signal to all of them would reach). */
  kymaCount(namespace: string): number {
    return this.namespaces.get(namespace)?.kymas.size ?? 0;
  }

  /** The Kymas that use `module` on `channel` (pins excluded), sorted. */
  kymasOn(namespace: string, module: string, channel: string): string[] {
    return [...(this.namespaces.get(namespace)?.modules.get(module)?.channels.get(channel) ?? [])].sort();
  }

  /** The Kymas that pin `module` at `version`, sorted. */
  kymasPinning(namespace: string, module: string, version: string): string[] {
    return [...(this.namespaces.get(namespace)?.modules.get(module)?.pins.get(version) ?? [])].sort();
  }

  /** The channels some Kyma of the namespace uses `module` on, sorted. */
  channelsOf(namespace: string, module: string): string[] {
    return [...(this.namespaces.get(namespace)?.modules.get(module)?.channels.keys() ?? [])].sort();
  }

  /**
   * Records the ModuleReleaseMeta `name` as it is now (undefined: deleted) and returns what its
   * change means for the Kymas that use the module:
   * - `promotions`: channels with users that moved from one version to another (mandatory, else
   *   the channel's); their Kymas are not poked, the channel's rollout moves them. A
   *   ModuleReleaseMeta seen for the first time names every used channel it carries (the bridge
   *   may have missed a promotion; a rollout ignores the version it rolls already);
   * - `poke`: the Kymas whose resolution changes otherwise, sorted. Added or deleted, or another
   *   ocmComponentName: every user, pins included (a pinned module's component may be named by
   *   the ModuleReleaseMeta). Else those on a channel that gained or lost its version, and, when
   *   the set of channels changed, those on a channel without one (the message that lists the
   *   known channels changes).
   * - Mandatory (every Kyma of the namespace has the module on the channel "mandatory"): made
   *   or no longer mandatory (its deletion begun), or seen for the first time, pokes every Kyma;
   *   a new mandatory version is a promotion on "mandatory" (also on first sight).
   */
  releaseMetaChanged(
    namespace: string,
    name: string,
    now: ModuleReleaseMeta | undefined,
  ): { poke: string[]; promotions: { channel: string; version: string }[] } {
    const n = this.ns(namespace);
    const before = n.metas.get(name);
    const after = now ? snapshot(now) : undefined;
    if (after) n.metas.set(name, after);
    else n.metas.delete(name);
    const change: MetaChange = { poke: new Set<string>(), promotions: [] };
    mandatoryChanged(n, before, after, change);
    const users = n.modules.get(name);
    if (!users) return { poke: [...change.poke].sort(), promotions: change.promotions };
    usersChanged(users, before, after, change);
    const { poke, promotions } = change;
    promotions.sort((a, b) => a.channel.localeCompare(b.channel));
    return { poke: [...poke].sort(), promotions };
  }

  /**
   * What the rollouts of module `name` are told when its ModuleReleaseMeta is first seen: its
   * mandatory version, and each channel's that some Kyma uses (a bridge that takes over the
   * fleet-wide duties tells them so; each rollout ignores a version it has).
   */
  promotionsOf(namespace: string, name: string): { channel: string; version: string }[] {
    const meta = this.ns(namespace).metas.get(name);
    if (!meta) return [];
    const users = this.ns(namespace).modules.get(name);
    return [
      ...(meta.mandatory !== undefined ? [{ channel: MANDATORY_CHANNEL, version: meta.mandatory }] : []),
      ...(users ? channelVersions(meta, users) : []),
    ];
  }

  /**
   * The Kymas that resolve to the ModuleTemplate `name` (added, modified or deleted), sorted:
   * for every module X of the namespace with `name` = `<X>-<v>`, those pinning X at v and those
   * on a channel the ModuleReleaseMeta of X maps to v; when X has no ModuleReleaseMeta (known
   * to the index), every Kyma using X on a channel; every Kyma when X is mandatory at v.
   */
  templateChanged(namespace: string, name: string): string[] {
    const n = this.namespaces.get(namespace);
    if (!n) return [];
    const affected = new Set<string>();
    for (const [module, meta] of n.metas) {
      if (meta.mandatory !== undefined && name === `${module}-${meta.mandatory}`)
        for (const k of n.kymas.keys()) affected.add(k);
    }
    for (const [module, users] of n.modules) {
      if (!name.startsWith(`${module}-`)) continue;
      const version = name.slice(module.length + 1);
      for (const k of users.pins.get(version) ?? []) affected.add(k);
      const meta = n.metas.get(module);
      for (const [channel, kymas] of users.channels) {
        if (!meta || versionOn(meta, channel) === version) for (const k of kymas) affected.add(k);
      }
    }
    return [...affected].sort();
  }
}
