// The loop that runs one module of a Kyma: a thin interpreter of ModuleState
// (src/decisions/module-state.ts) that asks for the next step, runs it as an activity or a wait,
// and feeds the result back. Hosted by the Kyma's workflow (one coroutine per module), or by a
// module workflow of its own in runs begun before modules were hosted; the host says where a
// report goes, what finishing means and what happens after a wait.
import { condition, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { defaultNamespaceFor } from '../api/names';
import type { KymaRef } from '../contract/kyma';
import type { ReconcileSettings } from '../contract/settings';
import { checkReadsTarget, type CheckStep, type ModuleState, type ModuleStep } from '../decisions/module-state';
import { bestEffortActivities, CONTROL_PLANE_RETRY, controlPlaneActivities } from './control-plane';
import { failureOf, installAttemptOf } from './failure';
import type { KymaOutbox } from './kyma-outbox';
import type { LocalLane } from './local-lane';
import { WakeTimer, type LoopTimer } from './wake-timer';

/** Steps in the target cluster give up after a few attempts: the module shows the failure and retries later. */
const STEP_RETRY = { ...CONTROL_PLANE_RETRY, maximumAttempts: 5 } as const;
const checkActivities = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: STEP_RETRY });
/** A lost worker's removal step is noticed, and tried again elsewhere, within 30 s. */
const cleanup = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: STEP_RETRY });
/** Readiness checks as activities of their own: a hung target cluster holds neither a workflow task nor the Kyma's other local activities. */
const remoteCheck = proxyActivities<Activities>({ startToCloseTimeout: '2 minutes', retry: STEP_RETRY });

export type PublishStep = Extract<ModuleStep, { kind: 'publish' }>;

export interface ModuleHost {
  /** Writes the Manifest (the one Manifest writer; hosted and lean, gathers it for the Kyma's next write) and tells the Kyma of the report. */
  publish(step: PublishStep): Promise<void>;
  /** The module is removed or released: tell the Kyma (`stopTimers` cancels the loop's timers). */
  finish(stopTimers: () => void): Promise<void>;
  /** Whether the host asks the module to stop at its next wait. */
  interrupted(): boolean;
  /** After each wait: true ends the loop (the host took the module elsewhere). */
  afterWait(): Promise<boolean>;
  /** The loop waits (true) or works (false). */
  idle(waiting: boolean): void;
  /** Where its local activities take their turn. */
  lane: LocalLane;
  /**
   * Run inside the Kyma's workflow: readiness checks that read the target cluster are activities
   * of their own, not local ones, and an install checks readiness itself.
   */
  hosted: boolean;
  /** The Kyma's run is lean (patch lean-hosting): a check that reads no target cluster is a local activity. */
  lean: boolean;
  /** The drift timer the module shares with its Kyma (absent: a timer of its own). */
  drift?: LoopTimer;
  /** Where its Events go, to be written with the Kyma's status (absent: each by a local activity). */
  outbox?: KymaOutbox;
}

/** Runs the module until it is removed, released or its host stops it. */
export async function runModuleLoop(st: ModuleState, settings: ReconcileSettings, host: ModuleHost): Promise<void> {
  const { kyma } = st;
  const [events, check, kcp] = [
    host.lane.serial(bestEffortActivities),
    host.lane.serial(checkActivities),
    host.lane.serial(controlPlaneActivities),
  ];
  // The install heartbeats, so a lost worker is noticed within 30 s though the whole install
  // may take up to the CRD timeout.
  const { installModule } = proxyActivities<Activities>({
    startToCloseTimeout: settings.crdEstablishedTimeoutMs + 5 * 60_000,
    heartbeatTimeout: '30 seconds',
    retry: STEP_RETRY,
  });
  const timers: Record<'drift' | 'deadline' | 'retry', LoopTimer> = {
    drift: host.drift ?? new WakeTimer(),
    deadline: new WakeTimer(),
    retry: new WakeTimer(),
  };
  /** The Kyma as target-cluster activities need it. */
  const target = (): KymaRef => (st.desired.remote ? { ...kyma, remote: true } : kyma);
  const module = () => st.desired.name;
  /** What every cleanup step names: the Kyma, as target-cluster activities need it, and the module. */
  const on = () => ({ kyma: target(), module: module() });
  const defaultNamespace = defaultNamespaceFor(settings.defaultNamespace, kyma.name);
  /**
   * Hosted, a check that decides from what the watch told (no read in the target cluster) is a
   * local activity: one marker, no task of its own; one that reads the target cluster stays an
   * activity (runs recorded before check every time as an activity).
   */
  const viewCheck = (step: CheckStep) => !checkReadsTarget(step) && host.lean;

  for (;;) {
    const step = st.next();
    try {
      switch (step.kind) {
        case 'install': {
          const params = {
            kymaNamespace: kyma.namespace,
            kymaName: kyma.name,
            module: step.module.name,
            defaultNamespace,
          };
          // Hosted, the install checks readiness itself: one activity, not two.
          st.installedModule(
            step.module,
            await installModule({
              kyma: target(),
              module: step.module,
              params,
              crdTimeoutMs: settings.crdEstablishedTimeoutMs,
              ...(step.previous ? { previous: step.previous } : {}),
              ...(host.hosted ? { check: true } : {}),
            }),
            Date.now(),
          );
          break;
        }
        case 'checkReadiness':
          st.observed(
            await (host.hosted && !viewCheck(step) ? remoteCheck : check).checkReadiness({
              ...on(),
              ...(step.manager ? { manager: step.manager } : {}),
              ...(step.cr ? { cr: step.cr } : {}),
              ...(step.seen ? { seen: step.seen } : {}),
              ...(step.observed ? { observed: step.observed } : {}),
              ...(step.inspectPods ? { inspectPods: true } : {}),
            }),
            Date.now(),
          );
          break;
        case 'checkPaused':
          st.pausedIs(
            await check.manifestPaused({ kyma, module: module(), ...(step.seen ? { seen: step.seen } : {}) }),
          );
          break;
        case 'publish':
          await host.publish(step);
          break;
        case 'event':
          if (host.outbox) host.outbox.event(step.event);
          else await events.recordKymaEvent({ kyma, uid: st.uid, event: step.event }).catch(() => undefined);
          break;
        case 'findBlockers':
          st.blockers(
            await cleanup.findBlockingResources({
              ...on(),
              cr: step.cr,
              exceptDefault: step.exceptDefault,
              rendered: step.rendered,
            }),
          );
          break;
        case 'deleteDefaultCr':
          st.defaultCrDeleted(
            await cleanup.deleteDefaultCr({
              ...on(),
              cr: step.cr,
              keepClusterScoped: step.keepClusterScoped,
            }),
          );
          break;
        case 'deleteObjects': {
          const { done, left } = await cleanup.deleteModuleObjects({
            ...on(),
            rendered: step.rendered,
            ...(step.cr ? { cr: step.cr } : {}),
            ...(step.also ? { also: step.also } : {}),
          });
          st.objectsDeleted(done, left);
          break;
        }
        case 'releaseObjects':
          await cleanup.releaseModuleObjects({
            ...on(),
            rendered: step.rendered,
            ...(step.cr ? { cr: step.cr } : {}),
          });
          st.objectsReleased();
          break;
        case 'deleteManifest':
          // A report gathered but not written yet would bring the Manifest back.
          host.outbox?.forget(module());
          await kcp.deleteManifest({ kyma, module: module() });
          st.manifestDeleted();
          break;
        case 'finish':
          await host.finish(() => {
            for (const t of Object.values(timers)) t.cancel();
          });
          return;
        case 'wait': {
          const { drift, deadline, retry } = timers;
          if (step.driftMs !== undefined) drift.arm(step.driftMs);
          for (const [timer, ms] of [
            [deadline, step.deadlineMs],
            [retry, step.retryMs],
          ] as const) {
            if (ms === undefined) timer.cancel();
            else timer.arm(ms);
          }
          const withDrift = step.driftMs !== undefined;
          host.idle(true);
          await condition(
            () => st.awake() || (withDrift && drift.fired()) || deadline.fired() || retry.fired() || host.interrupted(),
          );
          host.idle(false);
          const due = deadline.take();
          retry.take();
          st.woke(withDrift && drift.take(), due);
          if (await host.afterWait()) return;
          break;
        }
      }
    } catch (err) {
      // Activity failures become the module's status; anything else is thrown on.
      const failure = failureOf(err);
      if (step.kind === 'install') st.installFailed(failure, installAttemptOf(err));
      else if (step.kind === 'checkReadiness') st.checkFailed(failure);
      else if (step.kind === 'checkPaused') st.pauseCheckFailed(failure);
      else if (step.kind === 'publish')
        throw err; // retried until it succeeds
      else st.cleanupFailed(failure);
    }
  }
}
