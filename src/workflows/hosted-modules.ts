// The modules a Kyma's workflow runs itself: one coroutine of the module loop
// (./module-loop.ts) per module, inside the Kyma's workflow, instead of a module workflow each.
// A report goes straight to the Kyma's state (no signal), the Manifest is written as before,
// and a continue-as-new of the Kyma carries every module's state.
import { patched } from '@temporalio/workflow';
import type { KymaRef } from '../contract/kyma';
import type { DesiredModule } from '../contract/module';
import type { ModuleReport } from '../contract/readiness';
import type { ReconcileSettings } from '../contract/settings';
import type { ResourceChange } from '../contract/signals';
import type { HostedModule } from '../contract/workflow-inputs';
import { ModuleState } from '../decisions/module-state';
import { controlPlaneActivities } from './control-plane';
import type { LocalLane } from './local-lane';
import { runModuleLoop } from './module-loop';
import type { SharedDrift } from './shared-drift';
import type { KymaOutbox } from './kyma-outbox';

interface Running {
  st: ModuleState;
  idle: boolean;
}

/** What the modules tell the Kyma. */
export interface ModuleListener {
  reported(r: ModuleReport): void;
  removed(name: string): void;
}

export class HostedModules {
  private readonly running = new Map<string, Running>();

  private readonly kcp: typeof controlPlaneActivities;

  /**
   * `lane`: where the Kyma's workflow runs its local activities, one at a time; `lean`: the
   * run checks from views locally (patch lean-hosting); `drift`: the Kyma's drift timer, when
   * its modules share it (runs recorded before give each module its own); `outbox`: where their
   * Manifests and Events are gathered, to be written with the Kyma's status (runs recorded
   * before write each alone).
   */
  constructor(
    private readonly kyma: KymaRef,
    private readonly settings: ReconcileSettings,
    private readonly kymaSide: ModuleListener,
    private readonly lane: LocalLane,
    private readonly lean: boolean,
    private readonly drift?: SharedDrift,
    private readonly outbox?: KymaOutbox,
  ) {
    this.kcp = lane.serial(controlPlaneActivities);
  }

  has(name: string): boolean {
    return this.running.has(name);
  }

  /** Runs a module (from its start, or from the state a module workflow or a run before carried). */
  start(m: HostedModule): void {
    const st = new ModuleState(
      {
        kyma: this.kyma,
        uid: m.uid,
        module: m.module,
        settings: this.settings,
        ...(m.after ? { after: m.after } : {}),
        ...(m.carried ? { carried: m.carried } : {}),
      },
      this.settings,
      true,
      // Runs recorded before a blocked removal was a Warning keep showing it Deleting.
      !patched('outage-and-blocked-status'),
    );
    const entry: Running = { st, idle: false };
    this.running.set(m.name, entry);
    const { kyma } = this;
    void runModuleLoop(st, this.settings, {
      publish: async ({ report, readiness, module: desired, rendered, resource, resourceKind }) => {
        const manifest = {
          uid: st.uid,
          module: desired,
          readiness,
          ...(rendered ? { rendered } : {}),
          ...(resource ? { resource } : {}),
          ...(resourceKind ? { resourceKind } : {}),
        };
        if (this.outbox) this.outbox.manifest(m.name, manifest);
        else await this.kcp.publishModuleReport({ kyma, report, hosted: true, ...manifest });
        this.kymaSide.reported(report);
      },
      finish: (stopTimers) => {
        stopTimers();
        this.running.delete(m.name);
        this.kymaSide.removed(m.name);
        return Promise.resolve();
      },
      interrupted: () => false,
      afterWait: () => Promise.resolve(false),
      idle: (waiting) => {
        entry.idle = waiting;
      },
      lane: this.lane,
      hosted: true,
      lean: this.lean,
      ...(this.drift ? { drift: this.drift.user() } : {}),
      ...(this.outbox ? { outbox: this.outbox } : {}),
    });
  }

  want(name: string, d: DesiredModule): void {
    this.running.get(name)?.st.want(d);
  }

  remove(name: string): void {
    this.running.get(name)?.st.remove();
  }

  release(name: string): void {
    this.running.get(name)?.st.releaseObjects();
  }

  changed(name: string, change?: ResourceChange): void {
    this.running.get(name)?.st.poke(change);
  }

  /** Every module waits with nothing new to do (none is in the middle of a step): a continue-as-new loses nothing. */
  idle(): boolean {
    return [...this.running.values()].every((r) => r.idle && !r.st.awake());
  }

  /** What a continue-as-new carries. */
  carry(): Record<string, HostedModule> {
    return Object.fromEntries(
      [...this.running].map(([name, { st }]) => [name, { name, uid: st.uid, module: st.desired, carried: st.carry() }]),
    );
  }
}
