// The runtime side of a Kyma with a kubeconfig Secret: its runtime Kyma, whose spec stands for
// the modules the Kyma wants; the catalog its users may see; the status mirrored to them; their
// clean-up once the Kyma goes; and how all that stands, as the condition `Runtime`. It decides
// which of those steps are due; the Kyma's state (KymaState) places them among its own.
import { RUNTIME_KYMA } from '../api/runtime';
import type { ConditionInput } from '../api/shared';
import type { KymaSnapshot, Visibility } from '../contract/kyma';
import type { Readiness } from '../contract/readiness';
import type { CatalogSync, RuntimeKymaSync, RuntimeSide, RuntimeSpec } from '../contract/runtime';
import { eventStep, type KymaStep } from './kyma-steps';

/** What a runtime sync leaves the Kyma with. */
export interface RuntimeSynced {
  /** The Kyma as its modules follow it: the runtime's spec (mandatory modules kept) or the control plane's. */
  snapshot: KymaSnapshot;
  /** To run before the resolution: an Event. */
  steps: KymaStep[];
  /** The status is to be written again, changed or not (the runtime is back, or its Kyma new). */
  rewrite: boolean;
}

export class KymaRuntimeSide {
  /** As far as it was synced (carried across continue-as-new). */
  state: RuntimeSide = { catalog: 'full' };
  /** When (workflow time) to read a runtime again that could not be synced. */
  private retryRuntimeAt?: number;
  /** The control-plane spec sent with the last syncRuntime step. */
  private syncing?: RuntimeSpec;

  constructor(carried?: RuntimeSide) {
    if (carried) this.state = { ...carried, catalog: carried.catalog ?? 'changed' };
  }

  get retryAt(): number | undefined {
    return this.retryRuntimeAt;
  }

  /** The modules follow a runtime Kyma of this Kyma's own. */
  get hasRuntimeKyma(): boolean {
    return this.state.mode === 'synced';
  }

  /** A ModuleTemplate or ModuleReleaseMeta this Kyma's runtime may see changed: its catalog is synced. */
  catalogChanged(): void {
    this.state.catalog ??= 'changed';
  }

  /** The drift timer: the catalog is checked against what the runtime holds, a failed clean-up tried again. */
  drifted(): void {
    this.state.catalog = 'full';
    this.retryCleanup();
  }

  /** A failed clean-up goes again (with the next load of the deleted Kyma, or the drift timer). */
  retryCleanup(): void {
    if (this.state.cleanup === 'failed') delete this.state.cleanup;
  }

  /** The step that makes sure of the runtime Kyma, with what changed in the control plane since the last one. */
  sync(snapshot: KymaSnapshot): KymaStep {
    const controlPlane = { channel: snapshot.channel, modules: snapshot.modules.filter((m) => !m.mandatory) };
    this.syncing = controlPlane;
    const { before, known } = this.state;
    return { kind: 'syncRuntime', controlPlane, ...(before ? { before } : {}), ...(known ? { known } : {}) };
  }

  /**
   * What the runtime sync found: a runtime Kyma of its own makes its spec the modules this Kyma
   * wants (mandatory ones stay); without one, or when it cannot be reached (`failure`), the
   * runtime's spec as last read, else the control plane's. The catalog, when due, is marked so
   * (`catalogDue`) and synced after the resolution.
   */
  synced(result: RuntimeKymaSync | { failure: Readiness }, snapshot: KymaSnapshot): RuntimeSynced {
    const rt = this.state;
    const steps: KymaStep[] = [];
    let rewrite = false;
    if ('failure' in result) {
      rt.problem = result.failure;
    } else {
      // Back after a failure: its status is written again, changed or not.
      if (rt.problem) rewrite = true;
      delete rt.problem;
      rt.mode = result.kind;
      if (result.kind === 'synced') {
        rt.before = this.syncing;
        rt.known = result.spec;
        // A runtime Kyma made anew has no status yet, and maybe no catalog (its users may have deleted more).
        if (result.created) {
          rewrite = true;
          rt.catalog = 'full';
        }
      } else {
        delete rt.before;
        delete rt.known;
      }
      if (result.kind === 'taken' && rt.toldTaken !== result.owner) {
        rt.toldTaken = result.owner;
        steps.push(
          eventStep(
            'Warning',
            'RuntimeKymaTaken',
            `the runtime Kyma ${RUNTIME_KYMA.namespace}/${RUNTIME_KYMA.name} of this cluster belongs to ` +
              `Kyma ${result.owner}: this Kyma's modules follow its own spec, and its runtime's users do ` +
              `not see it`,
          ),
        );
      }
    }
    let followed = snapshot;
    const spec = rt.mode === 'synced' ? rt.known : undefined;
    if (spec) {
      // Mandatory modules are those the runtime's spec does not list (whatever the control plane's lists).
      const listed = new Set(spec.modules.map((m) => m.name));
      const mandatory = snapshot.mandatoryModules ?? snapshot.modules.filter((m) => m.mandatory);
      followed = {
        ...snapshot,
        channel: spec.channel || snapshot.channel,
        modules: [...spec.modules, ...mandatory.filter((m) => !listed.has(m.name))],
      };
    }
    if (rt.catalogVisibility !== JSON.stringify(snapshot.visibility)) rt.catalog ??= 'changed';
    if (rt.catalogFailed) {
      rt.catalog = 'full';
      delete rt.catalogFailed;
    }
    // The catalog, when due, is synced after the resolution (`catalogDue`): the modules need not wait for it.
    return { snapshot: followed, steps, rewrite };
  }

  /** Whether the runtime holds a catalog that is to be synced (the Kyma says when it may be). */
  get catalogDue(): boolean {
    return Boolean(this.state.catalog) && this.hasRuntimeKyma;
  }

  syncCatalog(visibility: Visibility): KymaStep {
    const full = this.state.catalog === 'full';
    delete this.state.catalog;
    return { kind: 'syncCatalog', visibility, full, after: this.state.catalogSyncs ?? 0 };
  }

  /**
   * What the catalog sync did, or why it could not (tried again on the next change or the drift
   * timer); true when that changes the status (the failure shows).
   */
  catalogSynced(result: CatalogSync | { failure: Readiness }, visibility: Visibility): boolean {
    if ('failure' in result) {
      this.state.problem = result.failure;
      // Read in full on the next load (a change, the cluster answering again) or the drift timer.
      this.state.catalogFailed = true;
      return true;
    }
    this.state.catalogVisibility = JSON.stringify(visibility);
    this.state.catalogSyncs = (this.state.catalogSyncs ?? 0) + 1;
    return false;
  }

  /**
   * The runtime's status could not be written: no more is tried (each would wait for a cluster
   * that does not answer) until a sync gets through, which writes the status again.
   */
  statusFailed(failure: Readiness): void {
    this.state.problem = failure;
  }

  /** Whether the Kyma's status goes to the runtime's users too: while there is a runtime Kyma that answers. */
  get mirrors(): boolean {
    const { mode, cleanup, problem } = this.state;
    return mode === 'synced' && cleanup !== 'done' && !problem;
  }

  /** A full resolution: a runtime that could not be synced is tried again after `o.backoffMs` (its condition says why meanwhile). */
  resolved(now: number, o: { deleting: boolean; backoffMs: number }): void {
    this.retryRuntimeAt = this.state.problem && !o.deleting ? now + o.backoffMs : undefined;
  }

  /**
   * The deleted Kyma's modules are gone: its runtime Kyma, catalog and CRDs go next, or, after a
   * failure, on the next change or the drift timer. None for a Kyma without a runtime side.
   */
  cleanup(driftMs: number): KymaStep | undefined {
    if (!this.hasRuntimeKyma || this.state.cleanup === 'done') return undefined;
    return this.state.cleanup === 'failed' ? { kind: 'wait', driftMs } : { kind: 'cleanRuntime' };
  }

  /** Whether the runtime's clean-up went (else the Kyma waits, showing why, and tries again). */
  cleaned(failure?: Readiness): void {
    this.state.cleanup = failure ? 'failed' : 'done';
    if (failure) this.state.problem = failure;
    else delete this.state.problem;
  }

  /** How the runtime side stands, as a condition (none for a Kyma without one); `o.remote`: the Kyma has a kubeconfig Secret now. */
  condition(o: { remote: boolean }): ConditionInput | undefined {
    const { mode, problem } = this.state;
    if ((!mode && !problem) || (!o.remote && mode !== 'synced')) return undefined;
    const runtime = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
      type: 'Runtime',
      status,
      reason,
      message,
    });
    const kyma = `${RUNTIME_KYMA.namespace}/${RUNTIME_KYMA.name}`;
    if (problem)
      return runtime('False', problem.reason, `the runtime Kyma ${kyma} could not be synced: ${problem.message}`);
    if (mode === 'controlPlane')
      return runtime(
        'True',
        'ControlPlane',
        "the kubeconfig names the control-plane cluster itself: no runtime Kyma; the modules follow this Kyma's spec",
      );
    if (mode === 'taken')
      return runtime(
        'False',
        'RuntimeKymaTaken',
        `the runtime Kyma ${kyma} belongs to Kyma ${this.state.toldTaken ?? 'another'}: the modules follow this Kyma's spec`,
      );
    return runtime('True', 'Synced', `the modules follow the runtime Kyma ${kyma}`);
  }
}
