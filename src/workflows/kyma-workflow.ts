// KymaWorkflow: one per Kyma (id kyma/<namespace>/<name>). Load the Kyma → resolve its
// modules → start or update one ModuleWorkflow per module → aggregate their reports into
// the Kyma's status (the one writer) → wait for a signal or the drift timer.
import {
  ParentClosePolicy,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyActivities,
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
import { desiredModule, kymaChanged, moduleReport, templatesChanged } from './signals';
import type { KymaRef, KymaSnapshot, ModuleReport, ReconcileSettings, Resolution, ResolvedModule } from './types';
import { shouldContinueAsNew } from './util';

export interface KymaWorkflowInput {
  kyma: KymaRef;
  settings: ReconcileSettings;
  /** Carried across continue-as-new. */
  carried?: { uid: string; desired: Record<string, ResolvedModule>; reports: Record<string, ModuleReport> };
}

const kcp = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

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
  needsResolve = true;
  statusDirty = true;
  private lastStatus = '';

  apply(resolutions: Resolution[]): { start: ResolvedModule[]; update: ResolvedModule[] } {
    const start: ResolvedModule[] = [];
    const update: ResolvedModule[] = [];
    this.failures = {};
    for (const r of resolutions) {
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
    return (this.snapshot?.modules ?? []).map((m) => {
      const failure = this.failures[m.name];
      if (failure) return failure;
      const report = this.reports[m.name];
      if (report) return report.status;
      const d = this.desired[m.name];
      return { name: m.name, state: 'Processing', message: 'installing', ...(d ? { channel: d.channel, version: d.version } : {}) };
    });
  }

  /** The Kyma status to write, or undefined when it is what was written last. */
  status(): KymaStatusInput | undefined {
    const modules = this.moduleStatuses();
    const state = aggregateState(modules);
    const notReady = modules.filter((m) => m.state !== 'Ready' && m.state !== 'Unmanaged');
    const message = notReady.length === 0 ? 'all modules are ready' : notReady.map((m) => `${m.name}: ${m.message ?? m.state}`).join('; ');
    const status: KymaStatusInput = {
      state,
      activeChannel: this.snapshot?.channel,
      modules,
      conditions: [{ type: 'Modules', status: notReady.length === 0 ? 'True' : 'False', reason: notReady.length === 0 ? 'Ready' : 'NotReady', message }],
      lastOperation: { operation: state === 'Ready' ? 'kyma is ready' : message },
    };
    const key = JSON.stringify(status);
    if (key === this.lastStatus) return undefined;
    this.lastStatus = key;
    return status;
  }
}

export async function kymaWorkflow(input: KymaWorkflowInput): Promise<void> {
  const { kyma, settings } = input;
  const st = new KymaState();
  if (input.carried) {
    st.uid = input.carried.uid;
    st.desired = input.carried.desired;
    st.reports = input.carried.reports;
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

  async function startModule(m: ResolvedModule): Promise<void> {
    const workflowId = moduleWorkflowId(kyma.namespace, kyma.name, m.name);
    try {
      await startChild(moduleWorkflow, {
        workflowId,
        args: [{ kyma, uid: st.uid, module: m, settings }],
        // Module workflows outlive a continue-as-new of this one; they are ended explicitly.
        parentClosePolicy: ParentClosePolicy.ABANDON,
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
      st.snapshot = snapshot;
      const { start, update } = st.apply(await kcp.resolveModules(kyma, snapshot));
      await Promise.all([
        ...start.map(startModule),
        ...update.map((m) => getExternalWorkflowHandle(moduleWorkflowId(kyma.namespace, kyma.name, m.name)).signal(desiredModule, m)),
      ]);
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
    const resolved = await condition(() => st.needsResolve || st.statusDirty, settings.driftIntervalMs);
    if (!resolved) st.needsResolve = true;
    if (shouldContinueAsNew(settings)) {
      await continueAsNew<typeof kymaWorkflow>({ kyma, settings, carried: { uid: st.uid, desired: st.desired, reports: st.reports } });
    }
  }
}
