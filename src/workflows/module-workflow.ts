// ModuleWorkflow: one per Kyma × module (id kyma/<namespace>/<name>/module/<module>), in runs
// begun before the Kyma's workflow hosted its modules. It runs the module loop
// (./module-loop.ts) until the module is removed, or until the Kyma's workflow asks for it
// (`handOver`): it then sends the module's state to the Kyma's workflow and ends, and the
// Kyma's workflow runs the module from there.
import {
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { kymaWorkflowId } from '../api/names';
import { SA } from '../api/search-attributes';
import {
  desiredModule,
  handOver,
  handedOver,
  moduleRemoved,
  removeModule,
  resourceChanged,
  unmanageModule,
} from '../contract/signals';
import { moduleStatusQuery } from '../contract/queries';
import type { ModuleWorkflowInput } from '../contract/workflow-inputs';
import { ModuleState, type ModuleSearchAttributes } from '../decisions/module-state';
import { moduleDetails } from '../decisions/workflow-details';
import { shouldContinueAsNew } from './continue-as-new';
import { LocalLane } from './local-lane';
import { runModuleLoop } from './module-loop';

const kcp = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function moduleWorkflow(input: ModuleWorkflowInput): Promise<void> {
  const { kyma, settings } = input;
  // Runs recorded before it neither look at a manager's pods nor time out a missing manager;
  // those recorded before a blocked removal was a Warning keep showing it Deleting.
  const st = new ModuleState(input, settings, patched('manager-rollout'), !patched('outage-and-blocked-status'));
  let handOverAsked = false;
  setHandler(desiredModule, (d) => st.want(d));
  setHandler(resourceChanged, (change) => st.poke(change));
  setHandler(removeModule, () => st.remove());
  setHandler(unmanageModule, () => st.releaseObjects());
  setHandler(handOver, () => {
    handOverAsked = true;
  });
  setHandler(moduleStatusQuery, () => st.current() ?? null);
  const kymaHandle = () => getExternalWorkflowHandle(kymaWorkflowId(kyma.namespace, kyma.name));
  /** `ModuleName='greeter' AND ModuleState='Error'` finds it (one command, when state or version changed). */
  const announce = (a: ModuleSearchAttributes) =>
    upsertSearchAttributes([
      { key: SA.KymaName, value: kyma.name },
      { key: SA.KymaNamespace, value: kyma.namespace },
      { key: SA.ModuleName, value: st.desired.name },
      { key: SA.ModuleVersion, value: a.version },
      { key: SA.ModuleState, value: a.state },
    ]);

  await runModuleLoop(st, settings, {
    async publish({ report, readiness, module: desired, rendered, resource, resourceKind, searchAttributes }) {
      // The activity tells the Kyma's workflow (moduleReport).
      await kcp.publishModuleReport({
        kyma,
        uid: st.uid,
        module: desired,
        readiness,
        report,
        ...(rendered ? { rendered } : {}),
        ...(resource ? { resource } : {}),
        ...(resourceKind ? { resourceKind } : {}),
      });
      setCurrentDetails(moduleDetails(report));
      // Runs recorded before module workflows had search attributes upsert none.
      if (searchAttributes && patched('module-search-attributes')) announce(searchAttributes);
    },
    async finish() {
      // The Kyma's workflow may have ended (the Kyma is gone): nobody is left to tell.
      await kymaHandle()
        .signal(moduleRemoved, st.desired.name)
        .catch(() => undefined);
    },
    interrupted: () => handOverAsked,
    async afterWait() {
      if (handOverAsked) {
        await kymaHandle().signal(handedOver, {
          name: st.desired.name,
          uid: st.uid,
          module: st.desired,
          carried: st.carry(),
        });
        return true;
      }
      if (shouldContinueAsNew(settings))
        await continueAsNew<typeof moduleWorkflow>({
          kyma,
          uid: st.uid,
          module: st.desired,
          settings,
          carried: st.carry(),
        });
      return false;
    },
    idle: () => undefined,
    // One coroutine: its local activities run one after the other anyway.
    lane: new LocalLane(false),
    hosted: false,
    lean: false,
  });
}
