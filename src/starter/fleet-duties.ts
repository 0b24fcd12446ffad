// The bridge's fleet-wide duties, done by the one bridge that holds shard 0 (or the only bridge):
// promotions (each channel's rollout hears its channel's version), the finalizer of mandatory
// ModuleReleaseMetas (./mandatory-finalizer.ts), the watch on workflows the server ended
// (./ended-workflows.ts), and the fleet's state gauges (./fleet-states.ts). The bridge
// (./bridge.ts) feeds it its watches and hands it over as shard 0 comes and goes.
import type { Client } from '@temporalio/client';
import type { KubeObject } from '../api/shared';
import type { WorkflowEnded } from '../contract/signals';
import { bridgeLeader, exportFleetStates } from '../infra/metrics';
import type { KubeClient } from '../k8s/rest-client';
import { EndedWorkflows } from './ended-workflows';
import { fleetStates } from './fleet-states';
import { MandatoryFinalizer } from './mandatory-finalizer';
import { routePromotions, type Signal } from './routing';

const ENDED_POLL_MS = 30_000;

export interface FleetDutiesOptions {
  kcp: KubeClient;
  temporal: Client;
  taskQueue: string;
  /** How often to look for Kyma workflows the server ended; 0: never. 30 s by default. */
  endedWorkflowsPollMs?: number;
  /** Whether this bridge does the duties now (it holds shard 0, or is the only bridge). */
  leads: () => boolean;
  /** The control plane's objects, as the bridge's watches hold them. */
  kymas: () => KubeObject[];
  manifests: () => KubeObject[];
  releaseMetas: () => KubeObject[];
  /** The channels of a module's ModuleReleaseMeta whose rollouts are told their version when the duties are taken up. */
  promotionsOf: (namespace: string, name: string) => { channel: string; version: string }[];
  /** The newest ModuleTemplate version the bridge has seen ('': none). */
  templatesSeen: () => string;
  send: (signals: Signal[]) => void;
  onWorkflowEnded: (kyma: { namespace: string; name: string }, ended: WorkflowEnded) => void;
  log?: (msg: string) => void;
}

export class FleetDuties {
  private readonly mandatory: MandatoryFinalizer;
  /** Stops exporting the fleet's state gauges. */
  private unexport?: () => void;
  private ended?: EndedWorkflows;

  constructor(private readonly o: FleetDutiesOptions) {
    this.mandatory = new MandatoryFinalizer(o.kcp, o.releaseMetas, o.manifests, o.log);
  }

  /**
   * Takes the duties up: the fleet's state gauges, the watch on ended workflows; with `retell`
   * (shard 0 taken over from another bridge), each rollout hears its channel's version and each
   * mandatory module is checked (at start, the release-meta watch's first list does that).
   */
  take(retell: boolean): void {
    bridgeLeader.set(1);
    this.unexport = exportFleetStates(() => fleetStates(this.o.kymas(), this.o.manifests(), this.o.releaseMetas()));
    const every = this.o.endedWorkflowsPollMs ?? ENDED_POLL_MS;
    if (every > 0) {
      this.ended = new EndedWorkflows(this.o.temporal, this.o.taskQueue, every, this.o.onWorkflowEnded, this.o.log);
      this.ended.start();
    }
    if (!retell) return;
    for (const m of this.o.releaseMetas()) {
      const namespace = m.metadata.namespace ?? '';
      this.mandatory.check(namespace, m.metadata.name);
      this.promote(m, this.o.promotionsOf(namespace, m.metadata.name));
    }
  }

  /** Hands the duties over (shard 0 lost, or the bridge stops). */
  drop(): void {
    bridgeLeader.set(0);
    this.unexport?.();
    this.unexport = undefined;
    this.ended?.stop();
    this.ended = undefined;
  }

  /** Adds or drops the finalizer of mandatory ModuleReleaseMeta `namespace/name`, while leading. */
  checkMandatory(namespace: string, name: string): void {
    if (this.o.leads()) this.mandatory.check(namespace, name);
  }

  /** Tells the rollout of each channel that release meta `m` moved to another version, while leading. */
  promote(m: KubeObject, promotions: { channel: string; version: string }[]): void {
    if (this.o.leads()) this.o.send(routePromotions(m, promotions, this.o.templatesSeen()));
  }

  /** Resolves once the finalizer's writes under way are done. */
  idle(): Promise<void> {
    return this.mandatory.idle();
  }
}
