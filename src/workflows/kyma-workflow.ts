// KymaWorkflow: one per Kyma (id kyma/<namespace>/<name>). Load the Kyma → resolve its
// modules → start or update one ModuleWorkflow per module → aggregate their reports into
// the Kyma's status (the one writer) → wait for a signal or the drift timer.
import {
  ParentClosePolicy,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import type { KymaStatusInput, ModuleStatus } from '../api/kyma';
import { moduleWorkflowId } from '../api/names';
import { SA } from '../api/search-attributes';
import type { State } from '../api/shared';
import { moduleWorkflow } from './module-workflow';
import { desiredModule, kymaChanged, moduleRemoved, moduleReport, removeModule, templatesChanged, unmanageModule } from './signals';
import { WORKFLOW_TASK_TIMEOUT, type KymaRef, type KymaSnapshot, type ModuleReport, type ReconcileSettings, type Resolution, type ResolvedModule } from './types';
import { shouldContinueAsNew } from './util';
import { WakeTimer } from './wake-timer';

export interface KymaWorkflowInput {
  kyma: KymaRef;
  settings: ReconcileSettings;
  /** Carried across continue-as-new. */
  carried?: { uid: string; desired: Record<string, ResolvedModule>; reports: Record<string, ModuleReport>; removing?: Record<string, true>; remote?: boolean };
}

const KCP_OPTIONS = { startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', maximumInterval: '30 seconds' } } as const;
const remoteKcp = proxyActivities<Activities>(KCP_OPTIONS);
/** Control-plane reads and writes as local activities: one marker each, no extra workflow task. */
const localKcp = proxyLocalActivities<Activities>(KCP_OPTIONS);

/** Upstream's aggregation: any Error → Error; else Warning; else Processing; else Ready. */
export function aggregateState(modules: ModuleStatus[]): State {
  const states = new Set(modules.map((m) => m.state));
  if (states.has('Error')) return 'Error';
  if (states.has('Warning')) return 'Warning';
  if (states.has('Processing') || states.has('Deleting') || states.has('')) return 'Processing';
  return 'Ready';
}

/** Plain state of one Kyma: desired modules, resolution failures, reports. No I/O here. */
export class KymaState {
  uid = '';
  snapshot?: KymaSnapshot;
  desired: Record<string, ResolvedModule> = {};
  failures: Record<string, ModuleStatus> = {};
  reports: Record<string, ModuleReport> = {};
  /** Whether the Kyma ever had a kubeconfig Secret: its modules live in a remote cluster. */
  remote = false;
  /** Modules told to remove themselves, until they report back. */
  removing: Record<string, true> = {};
  needsResolve = true;
  statusDirty = true;
  private lastStatus = '';

  /**
   * Module workflows to tell to go: those no longer in the spec (or all, when the Kyma is
   * deleted) are removed; those with managed: false are released (their objects stay).
   */
  toRelease(): { remove: string[]; unmanage: string[] } {
    const modules = this.snapshot?.deleting ? [] : (this.snapshot?.modules ?? []);
    const wanted = new Set(modules.map((m) => m.name));
    const unmanaged = new Set(modules.filter((m) => !m.managed).map((m) => m.name));
    const running = Object.keys(this.desired).filter((n) => !this.removing[n]);
    return { remove: running.filter((n) => !wanted.has(n)), unmanage: running.filter((n) => unmanaged.has(n)) };
  }

  removed(name: string): void {
    delete this.desired[name];
    delete this.reports[name];
    delete this.removing[name];
    this.statusDirty = true;
  }

  apply(resolutions: Resolution[]): { start: ResolvedModule[]; update: ResolvedModule[] } {
    const start: ResolvedModule[] = [];
    const update: ResolvedModule[] = [];
    this.failures = {};
    if (this.snapshot?.deleting) return { start, update };
    const unmanaged = new Set((this.snapshot?.modules ?? []).filter((m) => !m.managed).map((m) => m.name));
    for (const r of resolutions) {
      if (unmanaged.has(r.ok ? r.module.name : r.status.name)) continue;
      if (!r.ok) {
        this.failures[r.status.name] = r.status;
        continue;
      }
      const prev = this.desired[r.module.name];
      if (!prev) start.push(r.module);
      else if (JSON.stringify(prev) !== JSON.stringify(r.module)) update.push(r.module);
      this.desired[r.module.name] = r.module;
    }
    this.statusDirty = true;
    return { start, update };
  }

  moduleStatuses(): ModuleStatus[] {
    const inSpec = new Set((this.snapshot?.modules ?? []).map((m) => m.name));
    // Modules on their way out keep their entry (Deleting) until they are gone.
    const leaving = Object.keys(this.removing).filter((n) => !inSpec.has(n) || this.snapshot?.deleting).map((n): ModuleStatus => {
      const last = this.reports[n]?.status;
      return last?.state === 'Deleting' ? last : { ...(last ?? { name: n }), name: n, state: 'Deleting', message: 'removing the module' };
    });
    const current = (this.snapshot?.deleting ? [] : (this.snapshot?.modules ?? [])).map((m): ModuleStatus => {
      if (!m.managed) return { name: m.name, state: 'Unmanaged', message: 'managed: false: the module keeps running without lifecycle management' };
      const failure = this.failures[m.name];
      if (failure) return failure;
      const report = this.reports[m.name];
      if (report) return report.status;
      const d = this.desired[m.name];
      return { name: m.name, state: 'Processing', message: 'installing', ...(d ? { channel: d.channel, version: d.version } : {}) } satisfies ModuleStatus;
    });
    return [...current, ...leaving];
  }

  /** The Kyma status to write, or undefined when it is what was written last. */
  status(): KymaStatusInput | undefined {
    const modules = this.moduleStatuses();
    const state = this.snapshot?.deleting ? 'Deleting' : aggregateState(modules);
    const notReady = modules.filter((m) => m.state !== 'Ready' && m.state !== 'Unmanaged');
    const message = notReady.length === 0 ? 'all modules are ready' : notReady.map((m) => `${m.name}: ${m.message ?? m.state}`).join('; ');
    const status: KymaStatusInput = {
      state,
      activeChannel: this.snapshot?.channel,
      modules,
      conditions: [{ type: 'Modules', status: notReady.length === 0 ? 'True' : 'False', reason: notReady.length === 0 ? 'Ready' : 'NotReady', message }],
      lastOperation: { operation: state === 'Ready' ? 'kyma is ready' : state === 'Deleting' ? `deleting: ${message}` : message },
    };
    const key = JSON.stringify(status);
    if (key === this.lastStatus) return undefined;
    this.lastStatus = key;
    return status;
  }
}

export async function kymaWorkflow(input: KymaWorkflowInput): Promise<void> {
  const { kyma, settings } = input;
  // Lean reconcile (see the module workflow): local activities, a drift timer left running.
  const lean = patched('lean-reconcile');
  const kcp = lean ? localKcp : remoteKcp;
  const drift = new WakeTimer();
  const st = new KymaState();
  if (input.carried) {
    st.uid = input.carried.uid;
    st.desired = input.carried.desired;
    st.reports = input.carried.reports;
    st.removing = input.carried.removing ?? {};
    st.remote = input.carried.remote ?? false;
  }
  setHandler(kymaChanged, () => {
    st.needsResolve = true;
  });
  setHandler(templatesChanged, () => {
    st.needsResolve = true;
  });
  setHandler(moduleReport, (r) => {
    st.reports[r.status.name] = r;
    st.statusDirty = true;
  });
  setHandler(moduleRemoved, (name) => {
    st.removed(name);
  });
  const event = (type: 'Normal' | 'Warning', reason: string, message: string) => kcp.recordKymaEvent(kyma, st.uid, type, reason, message);

  async function startModule(m: ResolvedModule): Promise<void> {
    const workflowId = moduleWorkflowId(kyma.namespace, kyma.name, m.name);
    if (patched('kyma-events')) await event('Normal', 'ModuleInstalling', `installing module ${m.name} ${m.version} (channel ${m.channel || 'pinned'})`);
    try {
      await startChild(moduleWorkflow, {
        workflowId,
        args: [{ kyma, uid: st.uid, module: m, settings }],
        // Module workflows outlive a continue-as-new of this one; they are ended explicitly.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      await getExternalWorkflowHandle(workflowId).signal(desiredModule, m);
    }
  }

  for (;;) {
    if (st.needsResolve) {
      st.needsResolve = false;
      const snapshot = await kcp.loadKyma(kyma);
      if (!snapshot) return; // the Kyma is gone
      if (st.uid && snapshot.uid !== st.uid) {
        // A different Kyma under the same name: start over for it.
        await continueAsNew<typeof kymaWorkflow>({ kyma, settings });
      }
      st.uid = snapshot.uid;
      const wasDeleting = st.snapshot?.deleting;
      if (snapshot.deleting && st.remote && !snapshot.remote) {
        // The target cluster's Secret is gone: nothing can be removed there. Say so, end the
        // module workflows, and let the Kyma go rather than hang forever.
        await event('Warning', 'TargetClusterGone', 'the kubeconfig Secret of this Kyma is gone, so its modules cannot be removed from the target cluster; dropping the finalizer');
        for (const n of Object.keys(st.desired)) {
          await getExternalWorkflowHandle(moduleWorkflowId(kyma.namespace, kyma.name, n)).cancel();
          await kcp.deleteManifest(kyma, n);
        }
        await kcp.removeKymaFinalizer(kyma, st.uid);
        return;
      }
      st.remote ||= snapshot.remote ?? false;
      st.snapshot = snapshot;
      if (snapshot.paused && !snapshot.deleting) {
        // skip-reconciliation: wait for the next change of the Kyma, no timer (deletion still goes ahead).
        await condition(() => st.needsResolve);
        continue;
      }
      if (!snapshot.deleting && !snapshot.finalized && patched('kyma-finalizer')) await kcp.addKymaFinalizer(kyma, st.uid);
      if (snapshot.deleting && !wasDeleting) await event('Normal', 'Deleting', 'the Kyma is being deleted: removing all its modules');
      const { start, update } = st.apply(snapshot.deleting ? [] : await kcp.resolveModules(kyma, snapshot));
      const { remove, unmanage } = st.toRelease();
      for (const n of [...remove, ...unmanage]) st.removing[n] = true;
      await Promise.all([
        ...start.map(startModule),
        ...update.map((m) => getExternalWorkflowHandle(moduleWorkflowId(kyma.namespace, kyma.name, m.name)).signal(desiredModule, m)),
        ...remove.map(async (n) => {
          await getExternalWorkflowHandle(moduleWorkflowId(kyma.namespace, kyma.name, n)).signal(removeModule);
          await event('Normal', 'ModuleRemoving', `removing module ${n}`);
        }),
        ...unmanage.map(async (n) => {
          await getExternalWorkflowHandle(moduleWorkflowId(kyma.namespace, kyma.name, n)).signal(unmanageModule);
          await event('Normal', 'ModuleUnmanaged', `module ${n} is no longer managed: its objects keep running, unlabelled`);
        }),
      ]);
    }
    if (st.snapshot?.deleting && Object.keys(st.desired).length === 0) {
      // Every module is gone: the remote clean-up (nothing to do until remote runtimes are
      // synced), then the finalizer goes and this workflow ends.
      await kcp.writeKymaStatus(kyma, st.uid, { ...(st.status() ?? {}), state: 'Deleting', modules: [], lastOperation: { operation: 'all modules removed; removing the finalizer' } });
      await event('Normal', 'Deleted', 'all modules removed; dropping the finalizer');
      await kcp.removeKymaFinalizer(kyma, st.uid);
      return;
    }
    if (st.statusDirty) {
      st.statusDirty = false;
      const status = st.status();
      if (status) {
        await kcp.writeKymaStatus(kyma, st.uid, status);
        upsertSearchAttributes([
          { key: SA.KymaState, value: status.state ?? '' },
          { key: SA.Channel, value: st.snapshot?.channel ?? '' },
          { key: SA.Modules, value: (status.modules ?? []).map((m) => m.name) },
        ]);
      }
    }
    if (lean) {
      drift.arm(settings.driftIntervalMs);
      await condition(() => st.needsResolve || st.statusDirty || drift.fired());
      if (drift.take()) st.needsResolve = true;
    } else {
      const resolved = await condition(() => st.needsResolve || st.statusDirty, settings.driftIntervalMs);
      if (!resolved) st.needsResolve = true;
    }
    if (shouldContinueAsNew(settings)) {
      await continueAsNew<typeof kymaWorkflow>({ kyma, settings, carried: { uid: st.uid, desired: st.desired, reports: st.reports, removing: st.removing, remote: st.remote } });
    }
  }
}
