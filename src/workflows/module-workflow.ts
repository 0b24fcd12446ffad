// ModuleWorkflow: one per Kyma × module. Fetch → render → apply → default CR → readiness,
// then wait for a change (new desired version, a watch event on the module's CR or manager,
// or the slow drift timer) and go again. Failures become the module's status, not crashes.
import { ActivityFailure, ApplicationFailure, condition, continueAsNew, getExternalWorkflowHandle, patched, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import { lt } from 'semver';
import type { Activities } from '../activities';
import { defaultNamespaceFor, kymaWorkflowId, manifestName } from '../api/names';
import { API_VERSION } from '../api/shared';
import { desiredModule, moduleRemoved, moduleReport, removeModule, resourceChanged, unmanageModule } from './signals';
import type { FetchedModule, KymaRef, ModuleReport, Readiness, ReconcileSettings, RenderedRef, ResolvedModule } from './types';
import { shouldContinueAsNew } from './util';
import { WakeTimer } from './wake-timer';

export interface Installed {
  version: string;
  templateGeneration: number;
  fetched: FetchedModule;
  rendered: RenderedRef;
}

export interface ModuleWorkflowInput {
  kyma: KymaRef;
  uid: string;
  module: ResolvedModule;
  settings: ReconcileSettings;
  installed?: Installed;
  /** Carried across continue-as-new once removal (or release) has begun. */
  removing?: boolean;
  unmanaging?: boolean;
}

const RETRY = { initialInterval: '1 second', maximumInterval: '30 seconds' } as const;
/** Install steps give up after a few attempts: the module then shows the error, and retries later. */
const INSTALL_RETRY = { ...RETRY, maximumAttempts: 5 } as const;
/** Short reads and writes: a lost worker is noticed within 30s. */
const kcp = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });
const step = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: INSTALL_RETRY });
/** Fetch downloads a layer, which may take long; it heartbeats, so a lost worker is noticed in 15s. */
const { fetchLayer } = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '15 seconds', retry: INSTALL_RETRY });
/**
 * Short reads and writes as local activities: one marker in history each, run inside the
 * workflow task that needs them (no activity task, no extra workflow task).
 */
const local = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });
const localStep = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: INSTALL_RETRY });

/** Plain state: what is wanted, what is installed, what was last reported. No I/O here. */
export class ModuleState {
  desired: ResolvedModule;
  installed?: Installed;
  pokes = 0;
  removing = false;
  unmanaging = false;
  paused = false;
  /** Workflow time since when the manager has been unavailable. */
  unavailableSince?: number;
  reportedTimeout = false;
  /** Install failures in a row (the retry backoff grows with them). */
  failedInstalls = 0;
  private lastReport = '';

  constructor(private readonly kyma: KymaRef, input: ModuleWorkflowInput) {
    this.desired = input.module;
    this.installed = input.installed;
    this.removing = input.removing ?? false;
    this.unmanaging = input.unmanaging ?? false;
  }

  /** A desired version lower than the installed one is refused: modules never downgrade. */
  downgrade(): Readiness | undefined {
    const i = this.installed;
    if (!i || !lt(this.desired.version, i.version)) return undefined;
    return {
      state: 'Warning',
      reason: 'DowngradeRefused',
      message: `version ${this.desired.version} is lower than the installed ${i.version}; keeping ${i.version} (modules are never downgraded)`,
    };
  }

  /**
   * A manager unavailable for longer than the timeout turns Processing into Error (with the
   * reason), until it becomes available. Returns the readiness and when to look again.
   */
  dependencyTimeout(r: Readiness, now: number, timeoutMs: number | undefined): { readiness: Readiness; recheckInMs?: number } {
    if (r.reason !== 'ManagerNotAvailable' || !timeoutMs) {
      this.unavailableSince = undefined;
      return { readiness: r };
    }
    this.unavailableSince ??= now;
    const left = this.unavailableSince + timeoutMs - now;
    if (left > 0) return { readiness: r, recheckInMs: left };
    return { readiness: { state: 'Error', reason: 'ManagerNotAvailableTimeout', message: `${r.message}: still not available after ${Math.round(timeoutMs / 1000)}s` } };
  }

  /** Backoff after a failed install: the first delay (30 s by default), doubling, at most the drift interval. */
  retryDelayMs(settings: ReconcileSettings): number {
    const first = settings.installRetryMs ?? 30_000;
    return Math.min(settings.driftIntervalMs, first * 2 ** Math.min(10, Math.max(0, this.failedInstalls - 1)));
  }

  needsInstall(): boolean {
    const i = this.installed;
    return !i || i.version !== this.desired.version || i.templateGeneration !== this.desired.template.generation;
  }

  /** The default CR this module manages (CreateAndDelete), if its template has one. */
  managedCr() {
    return this.desired.customResourcePolicy === 'CreateAndDelete' ? this.installed?.fetched.defaultCr : undefined;
  }

  report(r: Readiness): ModuleReport {
    const d = this.desired;
    const cr = this.managedCr();
    return {
      reason: r.reason,
      status: {
        name: d.name,
        ...(d.channel ? { channel: d.channel } : {}),
        version: this.installed?.version ?? d.version,
        state: r.state,
        message: r.message,
        ...(d.fqdn ? { fqdn: d.fqdn } : {}),
        template: { apiVersion: API_VERSION, kind: 'ModuleTemplate', metadata: { name: d.template.name, namespace: d.template.namespace, generation: d.template.generation } },
        manifest: { apiVersion: API_VERSION, kind: 'Manifest', metadata: { name: manifestName(this.kyma.name, d.name), namespace: this.kyma.namespace } },
        ...(cr ? { resource: { apiVersion: cr.apiVersion, kind: cr.kind, metadata: { name: cr.name, namespace: cr.namespace ?? '' } } } : {}),
      },
    };
  }

  /** True when the report differs from the last one published. */
  changed(report: ModuleReport): boolean {
    const key = JSON.stringify(report);
    if (key === this.lastReport) return false;
    this.lastReport = key;
    return true;
  }
}

function failureOf(err: unknown): Readiness {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { state: 'Error', reason: cause.type ?? 'Failed', message: cause.message };
  return { state: 'Error', reason: 'Failed', message: cause instanceof Error ? cause.message : String(cause) };
}

export async function moduleWorkflow(input: ModuleWorkflowInput): Promise<void> {
  const { kyma, uid, settings } = input;
  const st = new ModuleState(kyma, input);
  /**
   * Lean reconcile: one activity per install, readiness and reports as local activities, the
   * report to the Kyma workflow sent by that activity, and timers that are not restarted on
   * every wake-up. Histories from before it replay on the old path.
   */
  const lean = patched('lean-reconcile');
  // Apply heartbeats while it works, so that a lost worker is noticed within 10s even
  // though the whole apply may take up to the CRD timeout.
  const { applyRendered, installModule } = proxyActivities<Activities>({
    startToCloseTimeout: settings.crdEstablishedTimeoutMs + (lean ? 5 * 60_000 : 60_000),
    // Under load one API call may take seconds; a lost worker is still noticed within 30 s.
    heartbeatTimeout: lean ? '30 seconds' : '10 seconds',
    retry: INSTALL_RETRY,
  });
  const drift = new WakeTimer();
  const deadline = new WakeTimer();
  const retry = new WakeTimer();
  setHandler(desiredModule, (m) => {
    // Once remote, always remote: a vanished Secret must not redirect us to the control plane.
    st.desired = st.desired.remote && !m.remote ? { ...m, remote: true } : m;
  });
  setHandler(resourceChanged, () => {
    st.pokes++;
  });
  setHandler(removeModule, () => {
    st.removing = true;
  });
  setHandler(unmanageModule, () => {
    st.unmanaging = true;
  });
  const parent = getExternalWorkflowHandle(kymaWorkflowId(kyma.namespace, kyma.name));
  /** The Kyma as target-cluster activities need it. */
  const target = (): KymaRef => (st.desired.remote ? { ...kyma, remote: true } : kyma);
  const defaultNamespace = defaultNamespaceFor(settings.defaultNamespace, kyma.name);

  async function installDesired(): Promise<Readiness | undefined> {
    const desired = st.desired;
    try {
      if (lean) {
        const previous = st.installed;
        if (previous && previous.version !== desired.version) {
          await publish({ state: 'Processing', reason: 'Upgrading', message: `upgrading from ${previous.version} to ${desired.version}` }, previous);
          await event('Normal', 'ModuleUpgrading', `module ${desired.name}: upgrading from ${previous.version} to ${desired.version}`);
        }
        const params = { kymaNamespace: kyma.namespace, kymaName: kyma.name, module: desired.name, defaultNamespace };
        const { fetched, rendered } = await installModule(target(), desired, params, settings.crdEstablishedTimeoutMs, previous?.rendered ?? null);
        st.installed = { version: desired.version, templateGeneration: desired.template.generation, fetched, rendered };
        return undefined;
      }
      const fetched = await fetchLayer(desired, defaultNamespace);
      const rendered = await step.renderLayer(fetched.layer, {
        kymaNamespace: kyma.namespace,
        kymaName: kyma.name,
        module: desired.name,
        defaultNamespace,
        manager: fetched.manager,
      });
      const previous = st.installed;
      const upgrade = previous && previous.version !== desired.version && patched('upgrade-prune');
      if (upgrade) {
        await publish({ state: 'Processing', reason: 'Upgrading', message: `upgrading from ${previous.version} to ${desired.version}` }, previous);
        if (patched('lifecycle-events')) await event('Normal', 'ModuleUpgrading', `module ${desired.name}: upgrading from ${previous.version} to ${desired.version}`);
      }
      await applyRendered(target(), rendered, settings.crdEstablishedTimeoutMs);
      if (desired.customResourcePolicy === 'CreateAndDelete' && fetched.defaultCr) {
        await step.ensureDefaultCr(target(), desired, defaultNamespace);
      }
      // What the previous version had and this one has not goes, in the safe order.
      if (previous && previous.rendered.digest !== rendered.digest && patched('upgrade-prune')) {
        await step.pruneObjects(target(), desired.name, previous.rendered, rendered);
      }
      st.installed = { version: desired.version, templateGeneration: desired.template.generation, fetched, rendered };
      return undefined;
    } catch (err) {
      return failureOf(err);
    }
  }

  /** Writes the Manifest and tells the parent, when the report changed. */
  async function publish(r: Readiness, installed = st.installed): Promise<void> {
    const report = st.report(r);
    if (!st.changed(report)) return;
    const cr = installed?.fetched.defaultCr;
    const args = [kyma, uid, st.desired, { state: r.state, reason: r.reason, message: r.message }, installed?.rendered ?? null, st.managedCr() ?? null, cr ? `${cr.apiVersion}/${cr.kind}` : null] as const;
    if (lean) return await local.publishModuleReport(...args, report);
    await kcp.syncManifest(...args);
    await parent.signal(moduleReport, report);
  }

  const event = (type: 'Normal' | 'Warning', reason: string, message: string) => (lean ? local : kcp).recordKymaEvent(kyma, uid, type, reason, message);

  /** Runs a removal (or release) to its end; a failure shows as Error and is retried on the next change. */
  async function untilDone(what: string, steps: () => Promise<void>): Promise<void> {
    for (;;) {
      const pokes = st.pokes;
      try {
        return await steps();
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        const f = failureOf(err);
        await publish({ state: 'Error', reason: f.reason, message: `${what} failed, will retry: ${f.message}` });
        await condition(() => st.pokes !== pokes, settings.driftIntervalMs);
      }
    }
  }

  /** Blocking deletion, as upstream: wait while other CRs of the module's kind exist. */
  async function removeSelf(): Promise<void> {
    const installed = st.installed;
    const cr = installed?.fetched.defaultCr;
    const ownsDefault = st.desired.customResourcePolicy === 'CreateAndDelete';
    const events = patched('lifecycle-events');
    if (installed && cr) {
      let blockedBefore = false;
      for (;;) {
        const pokes = st.pokes;
        const blockers = await kcp.findBlockingResources(target(), cr, ownsDefault);
        if (blockers.count === 0) break;
        const more = blockers.count > blockers.first.length ? ` and ${blockers.count - blockers.first.length} more` : '';
        const message = `deletion blocked by ${blockers.count} ${cr.kind} resource(s): ${blockers.first.join(', ')}${more}; delete them to continue`;
        await publish({ state: 'Deleting', reason: 'DeletionBlocked', message });
        if (events && !blockedBefore) await event('Warning', 'DeletionBlocked', `module ${st.desired.name}: ${message}`);
        blockedBefore = true;
        await condition(() => st.pokes !== pokes, settings.driftIntervalMs);
      }
      // Only the default CR is left: delete it, and wait until it is really gone, while the
      // manager still runs to process its finalizers.
      while (ownsDefault) {
        const pokes = st.pokes;
        const finalizers = await kcp.deleteDefaultCr(target(), cr);
        if (finalizers === null) break;
        await publish({ state: 'Deleting', reason: 'WaitingForResource', message: `waiting for ${cr.kind} ${cr.namespace ? `${cr.namespace}/` : ''}${cr.name} to be deleted (finalizers: ${finalizers.join(', ') || 'none'})` });
        await condition(() => st.pokes !== pokes, settings.driftIntervalMs);
      }
      await publish({ state: 'Deleting', reason: 'DeletingObjects', message: `deleting the objects of ${st.desired.name} ${installed.version}` });
      if (events) await event('Normal', 'DeletingObjects', `module ${st.desired.name}: default resource gone, deleting its objects`);
      await kcp.deleteModuleObjects(target(), st.desired.name, installed.rendered);
    }
    await kcp.deleteManifest(kyma, st.desired.name);
    if (events) await event('Normal', 'ModuleRemoved', `module ${st.desired.name} removed`);
    await parent.signal(moduleRemoved, st.desired.name);
  }

  /** managed: false: the objects stay and keep running, without our label; the Manifest goes. */
  async function releaseSelf(): Promise<void> {
    if (st.installed) await kcp.releaseModuleObjects(target(), st.desired.name, st.installed.rendered, st.managedCr() ?? null);
    await kcp.deleteManifest(kyma, st.desired.name);
    await parent.signal(moduleRemoved, st.desired.name);
  }

  let forceApply = false;
  for (;;) {
    if (st.removing) return await untilDone('removal', removeSelf);
    if (st.unmanaging) return await untilDone('unmanaging', releaseSelf);
    if (st.paused) {
      // skip-reconciliation on the Manifest: wait for a change (no timer), then look again.
      const pokes = st.pokes;
      const desired = st.desired;
      await condition(() => st.pokes !== pokes || st.removing || st.unmanaging || st.desired !== desired);
      if (!st.removing && !st.unmanaging) st.paused = await kcp.manifestPaused(kyma, st.desired.name);
      continue;
    }
    // Taken before any activity runs: a signal that arrives while they run is not lost.
    const desired = st.desired;
    const pokes = st.pokes;
    const downgrade = st.downgrade();
    const applying = !downgrade && (forceApply || st.needsInstall());
    forceApply = false;
    const failure = downgrade ?? (applying ? await installDesired() : undefined);
    let readiness = failure;
    let recheckInMs: number | undefined;
    if (!readiness) {
      readiness = await (lean ? localStep : step).checkReadiness(target(), st.installed!.rendered.manager, st.managedCr(), st.desired.name).catch(failureOf);
      if (readiness.reason === 'Paused') {
        st.paused = true;
        continue;
      }
      // Something of ours vanished (deleted by hand): put it back at once, unless we just did.
      if (!applying && (readiness.reason === 'ManagerMissing' || readiness.reason === 'ResourceMissing')) {
        forceApply = true;
        continue;
      }
      if (settings.managerAvailableTimeoutMs && (lean || patched('manager-timeout'))) {
        ({ readiness, recheckInMs } = st.dependencyTimeout(readiness, Date.now(), settings.managerAvailableTimeoutMs));
      }
    }
    // A dependency timeout (CRDs not established, manager not available) is worth one Event.
    const timedOut = readiness.reason === 'ManagerNotAvailableTimeout' || readiness.reason === 'CrdNotEstablished';
    if (timedOut && !st.reportedTimeout && (lean || patched('manager-timeout'))) await event('Warning', 'DependencyTimeout', `module ${desired.name}: ${readiness.message}`);
    st.reportedTimeout = timedOut;
    await publish(readiness);

    const wanted = () => st.pokes !== pokes || st.desired !== desired || st.removing || st.unmanaging;
    if (lean) {
      // The drift timer runs from one firing to the next; a dependency deadline runs while
      // the manager stays unavailable. Wake-ups in between leave both alone.
      drift.arm(settings.driftIntervalMs);
      if (recheckInMs === undefined) deadline.cancel();
      else deadline.arm(recheckInMs);
      // A failed install is tried again after a backoff, not only on the next change: a
      // failure under load must not wait for the drift timer.
      const installFailed = !!failure && !downgrade;
      st.failedInstalls = installFailed ? st.failedInstalls + 1 : 0;
      if (installFailed && patched('install-retry')) retry.arm(st.retryDelayMs(settings));
      else if (!installFailed) retry.cancel();
      await condition(() => wanted() || drift.fired() || deadline.fired() || retry.fired());
      deadline.take();
      retry.take();
      // On the drift timer re-apply (idempotent) so that drift is repaired; after an error, retry.
      if (drift.take() || (failure && !downgrade)) forceApply = true;
    } else {
      // A pending dependency deadline is a durable timer too, shorter than the drift timer.
      const waitMs = Math.min(settings.driftIntervalMs, recheckInMs ?? Infinity);
      const changed = await condition(wanted, waitMs);
      const due = !changed && recheckInMs !== undefined && recheckInMs < settings.driftIntervalMs;
      if ((!changed && !due) || (failure && !downgrade)) forceApply = true;
    }
    if (shouldContinueAsNew(settings)) {
      await continueAsNew<typeof moduleWorkflow>({ ...input, module: st.desired, installed: st.installed, removing: st.removing || undefined, unmanaging: st.unmanaging || undefined });
    }
  }
}
