// The cluster a Kyma's modules go to, as its loads find it (the one its kubeconfig Secret names,
// else the control plane; told apart by the uid of kube-system, so another URL of the same
// cluster is no switch), and what a switch to another cluster left behind. The worker holds no
// credentials for a cluster the Secret no longer names, and a Secret pointed at the wrong cluster
// by mistake must not cost the right one its modules: nothing is removed there. Instead a
// Warning Event and the condition `TargetCluster` name that cluster and the modules whose objects
// stayed on it, until a person clears them (OLD_CLUSTERS_CLEARED_ANNOTATION, by the switch's
// number); a switch back to that cluster makes them the Kyma's own again.
import { describeCluster, sameCluster, type ClusterIdentity } from '../api/cluster-identity';
import type { KymaEvent } from '../api/events';
import { OLD_CLUSTERS_CLEARED_ANNOTATION } from '../api/names';
import { RUNTIME_KYMA } from '../api/runtime';
import type { ConditionInput } from '../api/shared';
import type { KymaSnapshot } from '../contract/kyma';
import type { CarriedTarget, LeftBehind } from '../contract/workflow-inputs';
import { eventStep, type KymaStep } from './kyma-steps';

/** A switch a load found: from the cluster the modules went to, to the one the Secret names now. */
export interface ClusterSwitch {
  from: ClusterIdentity;
  to: ClusterIdentity;
}

/** How many modules an Event names (the condition names all). */
const NAMED_IN_EVENT = 10;

export class KymaTargetCluster {
  /** The cluster the modules go to, as the last load that could tell found it. */
  cluster?: ClusterIdentity;
  private left: LeftBehind[];
  private switches: number;

  constructor(carried?: CarriedTarget) {
    if (carried?.cluster) this.cluster = carried.cluster;
    this.left = carried?.left ?? [];
    this.switches = carried?.switches ?? 0;
  }

  /**
   * What a load found: the cluster the modules go to now (unknown when it could not be told:
   * nothing changes). `o.remote`: the Kyma had a Secret before; one whose Secret went stays with
   * its cluster (its modules refuse the control plane). Returns the switch, if it is one.
   */
  loaded(snapshot: Pick<KymaSnapshot, 'cluster' | 'remote'>, o: { remote: boolean }): KymaStep | undefined {
    const found = o.remote && !snapshot.remote ? undefined : snapshot.cluster;
    if (!found) return undefined;
    const from = this.cluster;
    this.cluster = found;
    return from && !sameCluster(from, found) ? { kind: 'switchCluster', from, to: found } : undefined;
  }

  /**
   * A person took care of the switches up to number `upTo` (the annotation): they are no longer
   * told. Returns whether any was.
   */
  cleared(upTo: number | undefined): boolean {
    if (upTo === undefined) return false;
    const before = this.left.length;
    this.left = this.left.filter((l) => l.n > upTo);
    return this.left.length !== before;
  }

  /**
   * The switch went ahead: `modules` may have objects in the cluster left (and `o.runtime`: its
   * runtime Kyma, catalog and CRDs are there). Returns the Event that tells it.
   */
  switched(s: ClusterSwitch, modules: string[], o: { runtime: boolean }): KymaEvent {
    const runtime = o.runtime;
    // Back to a cluster left before: what stayed there is the Kyma's own again.
    this.left = this.left.filter((l) => !sameCluster(l.cluster, s.to));
    const now = `the kubeconfig Secret names another cluster now, ${describeCluster(s.to)}`;
    if (modules.length === 0 && !runtime)
      return {
        type: 'Normal',
        reason: 'TargetClusterSwitched',
        message: `${now}; nothing of this Kyma's was in ${describeCluster(s.from)}, which it named before`,
      };
    const n = ++this.switches;
    this.left.push({ n, cluster: s.from, modules, ...(runtime ? { runtime: true as const } : {}) });
    const named = modules.slice(0, NAMED_IN_EVENT).join(', ');
    const more = modules.length > NAMED_IN_EVENT ? ` and ${modules.length - NAMED_IN_EVENT} more` : '';
    return {
      type: 'Warning',
      reason: 'TargetClusterSwitched',
      message:
        `${now}: the modules are installed there; ${stayed(named + more, { runtime })} in ${describeCluster(s.from)}, ` +
        `which it named before: a cluster the Secret no longer names is left as it is (switch ${n}; ` +
        `the condition TargetCluster tells it until ${OLD_CLUSTERS_CLEARED_ANNOTATION}=${n} is set on this Kyma)`,
    };
  }

  /** The condition `TargetCluster`, while something is left in a cluster the Secret named before. */
  condition(): ConditionInput | undefined {
    if (this.left.length === 0) return undefined;
    const each = this.left.map(
      (l) =>
        `switch ${l.n}: ${stayed(l.modules.join(', '), { runtime: l.runtime === true })} in ${describeCluster(l.cluster)}`,
    );
    const last = this.left[this.left.length - 1]!.n;
    return {
      type: 'TargetCluster',
      status: 'False',
      reason: 'ModulesLeftOnOldCluster',
      message:
        `the kubeconfig Secret of this Kyma named another cluster before, and nothing was removed from it: ` +
        `${each.join('; ')}. Remove what is left there, then annotate this Kyma ` +
        `${OLD_CLUSTERS_CLEARED_ANNOTATION}=${last} to clear this`,
    };
  }

  /** The Event of the Kyma's end, once its modules are gone: Warning while something stays in a cluster its Secret named before. */
  deletedEvent(): KymaStep {
    const done = 'all modules removed; dropping the finalizer';
    if (this.left.length === 0) return eventStep('Normal', 'Deleted', done);
    const where = this.left.map(
      (l) => `${stayed(l.modules.join(', '), { runtime: l.runtime === true })} in ${describeCluster(l.cluster)}`,
    );
    return eventStep(
      'Warning',
      'Deleted',
      `${done}; left as they are in clusters its kubeconfig Secret named before: ${where.join('; ')}`,
    );
  }

  /** What a continue-as-new carries, as the field of CarriedKyma (none while nothing is known). */
  carry(): { target?: CarriedTarget } {
    if (!this.cluster && this.switches === 0) return {};
    return {
      target: {
        ...(this.cluster ? { cluster: this.cluster } : {}),
        ...(this.left.length ? { left: this.left } : {}),
        ...(this.switches ? { switches: this.switches } : {}),
      },
    };
  }
}

/** "the objects of a, b (and the runtime Kyma …) stayed", or the runtime side's alone. */
function stayed(modules: string, o: { runtime: boolean }): string {
  const rt = `the runtime Kyma ${RUNTIME_KYMA.namespace}/${RUNTIME_KYMA.name} with its catalog and CRDs`;
  if (!modules) return `${rt} stayed`;
  return `the objects of ${modules}${o.runtime ? ` and ${rt}` : ''} stayed`;
}
