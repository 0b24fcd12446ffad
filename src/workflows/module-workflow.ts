// ModuleWorkflow: one per Kyma × module (id kyma/<namespace>/<name>/module/<module>). A thin
// interpreter of ModuleState (src/decisions/module-state.ts): it asks for the next step, runs
// it as an activity, a signal or a wait, and feeds the result back.
import { condition, continueAsNew, getExternalWorkflowHandle, patched, proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { defaultNamespaceFor, kymaWorkflowId } from '../api/names';
import { SA } from '../api/search-attributes';
import { desiredModule, moduleRemoved, removeModule, resourceChanged, unmanageModule } from '../contract/signals';
import type { KymaRef } from '../contract/kyma';
import { moduleStatusQuery } from '../contract/queries';
import type { ModuleWorkflowInput } from '../contract/workflow-inputs';
import { ModuleState, type ModuleSearchAttributes } from '../decisions/module-state';
import { moduleDetails } from '../decisions/workflow-details';
import { shouldContinueAsNew } from './continue-as-new';
import { failureOf } from './failure';
import { WakeTimer } from './wake-timer';

const RETRY = { initialInterval: '1 second', maximumInterval: '30 seconds' } as const;
/** Steps in the target cluster give up after a few attempts: the module shows the failure and retries later. */
const STEP_RETRY = { ...RETRY, maximumAttempts: 5 } as const;
/** Control-plane reads and writes as local activities: one marker each, no extra workflow task. */
const kcp = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: RETRY });
/** Events are best effort: one that cannot be recorded (its namespace is being deleted, say) must not hold anything up. */
const events = proxyLocalActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { ...RETRY, maximumAttempts: 3 } });
const check = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: STEP_RETRY });
/** A lost worker's removal step is noticed, and tried again elsewhere, within 30 s. */
const cleanup = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: STEP_RETRY });

export async function moduleWorkflow(input: ModuleWorkflowInput): Promise<void> {
  const { kyma, settings } = input;
  // Runs recorded before it neither look at a manager's pods nor time out a missing manager.
  const st = new ModuleState(input, settings, patched('manager-rollout'));
  // The install heartbeats, so a lost worker is noticed within 30 s though the whole install
  // may take up to the CRD timeout.
  const { installModule } = proxyActivities<Activities>({ startToCloseTimeout: settings.crdEstablishedTimeoutMs + 5 * 60_000, heartbeatTimeout: '30 seconds', retry: STEP_RETRY });
  setHandler(desiredModule, (d) => st.want(d));
  setHandler(resourceChanged, (change) => st.poke(change));
  setHandler(removeModule, () => st.remove());
  setHandler(unmanageModule, () => st.releaseObjects());
  setHandler(moduleStatusQuery, () => st.current() ?? null);
  const timers = { drift: new WakeTimer(), deadline: new WakeTimer(), retry: new WakeTimer() };
  /** The Kyma as target-cluster activities need it. */
  const target = (): KymaRef => (st.desired.remote ? { ...kyma, remote: true } : kyma);
  const module = () => st.desired.name;
  const defaultNamespace = defaultNamespaceFor(settings.defaultNamespace, kyma.name);
  /** `ModuleName='greeter' AND ModuleState='Error'` finds it (one command, when state or version changed). */
  const announce = (a: ModuleSearchAttributes) =>
    upsertSearchAttributes([
      { key: SA.KymaName, value: kyma.name },
      { key: SA.KymaNamespace, value: kyma.namespace },
      { key: SA.ModuleName, value: module() },
      { key: SA.ModuleVersion, value: a.version },
      { key: SA.ModuleState, value: a.state },
    ]);

  for (;;) {
    const step = st.next();
    try {
      switch (step.kind) {
        case 'install': {
          const params = { kymaNamespace: kyma.namespace, kymaName: kyma.name, module: step.module.name, defaultNamespace };
          st.installedModule(step.module, await installModule({ kyma: target(), module: step.module, params, crdTimeoutMs: settings.crdEstablishedTimeoutMs, ...(step.previous ? { previous: step.previous } : {}) }));
          break;
        }
        case 'checkReadiness':
          st.observed(await check.checkReadiness({ kyma: target(), module: module(), ...(step.manager ? { manager: step.manager } : {}), ...(step.cr ? { cr: step.cr } : {}), ...(step.seen ? { seen: step.seen } : {}), ...(step.observed ? { observed: step.observed } : {}), ...(step.inspectPods ? { inspectPods: true } : {}) }), Date.now());
          break;
        case 'checkPaused':
          st.pausedIs(await check.manifestPaused({ kyma, module: module(), ...(step.seen ? { seen: step.seen } : {}) }));
          break;
        case 'publish': {
          const { report, readiness, module: desired, rendered, resource, resourceKind } = step;
          await kcp.publishModuleReport({ kyma, uid: st.uid, module: desired, readiness, report, ...(rendered ? { rendered } : {}), ...(resource ? { resource } : {}), ...(resourceKind ? { resourceKind } : {}) });
          setCurrentDetails(moduleDetails(report));
          // Runs recorded before module workflows had search attributes upsert none.
          if (step.searchAttributes && patched('module-search-attributes')) announce(step.searchAttributes);
          break;
        }
        case 'event':
          await events.recordKymaEvent({ kyma, uid: st.uid, event: step.event }).catch(() => undefined);
          break;
        case 'findBlockers':
          st.blockers(await cleanup.findBlockingResources({ kyma: target(), module: module(), cr: step.cr, exceptDefault: step.exceptDefault, rendered: step.rendered }));
          break;
        case 'deleteDefaultCr':
          st.defaultCrDeleted(await cleanup.deleteDefaultCr({ kyma: target(), module: module(), cr: step.cr, keepClusterScoped: step.keepClusterScoped }));
          break;
        case 'deleteObjects':
          st.objectsDeleted((await cleanup.deleteModuleObjects({ kyma: target(), module: module(), rendered: step.rendered, ...(step.cr ? { cr: step.cr } : {}) })).done);
          break;
        case 'releaseObjects':
          await cleanup.releaseModuleObjects({ kyma: target(), module: module(), rendered: step.rendered, ...(step.cr ? { cr: step.cr } : {}) });
          st.objectsReleased();
          break;
        case 'deleteManifest':
          await kcp.deleteManifest({ kyma, module: module() });
          st.manifestDeleted();
          break;
        case 'finish':
          // The Kyma's workflow may have ended (the Kyma is gone): nobody is left to tell.
          await getExternalWorkflowHandle(kymaWorkflowId(kyma.namespace, kyma.name)).signal(moduleRemoved, module()).catch(() => undefined);
          return;
        case 'wait': {
          const { drift, deadline, retry } = timers;
          if (step.driftMs !== undefined) drift.arm(step.driftMs);
          for (const [timer, ms] of [[deadline, step.deadlineMs], [retry, step.retryMs]] as const) {
            if (ms === undefined) timer.cancel();
            else timer.arm(ms);
          }
          const withDrift = step.driftMs !== undefined;
          await condition(() => st.awake() || (withDrift && drift.fired()) || deadline.fired() || retry.fired());
          const due = deadline.take();
          retry.take();
          st.woke(withDrift && drift.take(), due);
          if (shouldContinueAsNew(settings)) await continueAsNew<typeof moduleWorkflow>({ kyma, uid: st.uid, module: st.desired, settings, carried: st.carry() });
          break;
        }
      }
    } catch (err) {
      // Activity failures become the module's status; anything else is thrown on.
      const failure = failureOf(err);
      if (step.kind === 'install') st.installFailed(failure);
      else if (step.kind === 'checkReadiness') st.checkFailed(failure);
      else if (step.kind === 'checkPaused') st.pauseCheckFailed(failure);
      else if (step.kind === 'publish') throw err; // retried until it succeeds
      else st.cleanupFailed(failure);
    }
  }
}
