// KymaWorkflow: one per Kyma (id kyma/<namespace>/<name>). A thin interpreter of KymaState
// (src/decisions/kyma-state.ts): it asks for the next step, runs it as an activity, a signal or
// a wait, and feeds the result back. It runs the Kyma's modules itself, one coroutine of the
// module loop each (./hosted-modules.ts); runs begun before that started a child workflow per
// module, and hand them over (`handOver`) on their first step on a worker of this code.
import {
  ParentClosePolicy,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import type { KymaEvent } from '../api/events';
import { moduleWorkflowId } from '../api/names';
import { admitModule, rolloutEnded, rolloutReport, rolloutWaiting, rolloutWorkflowId } from '../contract/rollout';
import { SA } from '../api/search-attributes';
import { kymaStatusQuery } from '../contract/queries';
import {
  catalogChanged,
  desiredModule,
  handOver,
  handedOver,
  kymaChanged,
  modulesChanged,
  moduleRemoved,
  moduleReport,
  removeModule,
  templatesChanged,
  unmanageModule,
  workflowEnded,
} from '../contract/signals';
import { WORKFLOW_TASK_TIMEOUT } from '../contract/settings';
import type { ResolvedModule } from '../contract/module';
import type { KymaWorkflowInput } from '../contract/workflow-inputs';
import { KymaState, type Dispatch } from '../decisions/kyma-state';
import { kymaDetails } from '../decisions/workflow-details';
import { upsertDue, type SearchAttributeValues } from '../decisions/search-attribute-values';
import { shouldContinueAsNew } from './continue-as-new';
import { bestEffortActivities, controlPlaneActivities } from './control-plane';
import { failureOf } from './failure';
import { HostedModules } from './hosted-modules';
import { KymaOutbox } from './kyma-outbox';
import { LocalLane } from './local-lane';
import { SharedDrift } from './shared-drift';
import { moduleWorkflow } from './module-workflow';
import { WakeTimer, type LoopTimer } from './wake-timer';

/**
 * The runtime side, in the managed cluster: a few attempts, then the failure shows in the status
 * and waits for the next change. Reading the runtime Kyma and writing its status (a request or
 * two, on every load and status change) are local activities, one marker each; the catalog sync
 * and the clean-up, which may write many objects, are activities of their own.
 */
const RUNTIME_RETRY = { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 } as const;
const runtimeKymaActivities = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: RUNTIME_RETRY,
});
const runtime = proxyActivities<Activities>({ startToCloseTimeout: '2 minutes', retry: RUNTIME_RETRY });

export async function kymaWorkflow(input: KymaWorkflowInput): Promise<void> {
  const { kyma, settings } = input;
  // Runs recorded before rollouts existed move modules to a new channel version without one.
  // Runs recorded before the runtime side existed keep to the control-plane Kyma alone.
  // Runs recorded before held modules joined their rollout (and before a runtime's outage swayed the state) do neither.
  // A run the bridge began in shape 1 (contract/workflow-inputs.ts) has each of these on without asking.
  // Runs recorded before modules' entries told their cluster's outage (and a blocked removal was a Warning) do neither.
  const shape1 = (input.shape ?? 0) >= 1;
  const st = new KymaState(
    settings,
    input.carried,
    shape1 || patched('rollout-gate'),
    shape1 || patched('runtime-side'),
    shape1 || patched('truthful-status'),
    !patched('outage-and-blocked-status'),
  );
  setHandler(kymaChanged, (seen) => st.changed(seen));
  setHandler(catalogChanged, () => st.catalogChanged());
  setHandler(admitModule, (a) => st.admit(a));
  setHandler(rolloutEnded, (n) => st.rolloutEnded(n));
  setHandler(workflowEnded, (e) => st.workflowEnded(e));
  setHandler(templatesChanged, (seen) => st.changed(seen));
  setHandler(moduleReport, (r) => st.reported(r));
  setHandler(moduleRemoved, (name) => st.removed(name));
  setHandler(kymaStatusQuery, () => st.status());
  const moduleHandle = (name: string) => getExternalWorkflowHandle(moduleWorkflowId(kyma.namespace, kyma.name, name));

  // Runs recorded before modules were hosted started a module workflow per module. They take
  // their modules over on their first step on this code (a patch at the top of the loop).
  let hosting = shape1 || patched('hosted-modules');
  // Hosting runs begun before this patch check every time as an activity, upsert every change,
  // give each module a drift timer of its own and write each Manifest, Event and status alone.
  const lean = shape1 || patched('lean-hosting');
  // Hosting from the start, one drift timer serves the Kyma and its modules (./shared-drift.ts).
  const shared = hosting && lean ? new SharedDrift() : undefined;
  const drift: LoopTimer = shared ? shared.user() : new WakeTimer();
  /** Hosting, local activities take turns (./local-lane.ts). */
  const lane = new LocalLane(hosting);
  const [kcp, bestEffort, runtimeKyma] = [
    lane.serial(controlPlaneActivities),
    lane.serial(bestEffortActivities),
    lane.serial(runtimeKymaActivities),
  ];
  /** Lean, hosting: Manifests, status and Events go out together (./kyma-outbox.ts). */
  const outbox = lean ? new KymaOutbox(kyma, () => st.uid, lane) : undefined;
  const writing = () => (hosting ? outbox : undefined);
  /** The Kyma's loop waits: what is gathered meanwhile is not written with a status of its. */
  let kymaWaiting = false;
  if (outbox) void outbox.flushWhenIdle(() => kymaWaiting && !st.awake());
  const hosted = new HostedModules(kyma, settings, st, lane, lean, shared, outbox);
  /** Modules whose workflow was asked to hand over, until its state arrives. */
  const handingOver = new Set<string>();
  /** News for a module while its workflow still runs it: the Kyma's loop wakes to take it over. */
  let takeOverDue = false;
  /** The search attribute values upserted last. */
  let upserted: SearchAttributeValues | undefined;

  for (const m of hosting ? Object.values(input.carried?.hosted ?? {}) : []) hosted.start(m);
  setHandler(modulesChanged, (changes) => {
    for (const { module, change } of changes) {
      if (hosted.has(module)) hosted.changed(module, change);
      else takeOverDue = true;
    }
  });
  setHandler(handedOver, (m) => {
    handingOver.delete(m.name);
    if (hosted.has(m.name) || !st.desired[m.name]) return;
    hosted.start(m);
    // What the bridge told meanwhile went to this workflow: everything is read again.
    hosted.changed(m.name);
  });

  /** Asks each module workflow still running for this Kyma to hand its module over. */
  async function takeOver(names: string[]): Promise<void> {
    await Promise.all(
      names
        .filter((n) => !hosted.has(n) && !handingOver.has(n))
        .map(async (n) => {
          handingOver.add(n);
          await moduleHandle(n)
            .signal(handOver)
            .catch(() => {
              // It ended without a word (a module it removed said so already): run it from the
              // start, going on with the removal or release it was in.
              handingOver.delete(n);
              const module = st.desired[n];
              if (module && !hosted.has(n))
                hosted.start({ name: n, uid: st.uid, module, ...(st.removing[n] ? { after: st.removing[n] } : {}) });
            });
        }),
    );
  }

  /** A continue-as-new goes on in the shape the run began in. */
  const shape = input.shape !== undefined ? { shape: input.shape } : {};
  /** What a continue-as-new carries: the Kyma's state and, once it hosts them, its modules'. */
  const carried = (c: NonNullable<KymaWorkflowInput['carried']>): NonNullable<KymaWorkflowInput['carried']> =>
    hosting ? { ...c, hosted: hosted.carry() } : c;

  /** Tells the module's rollout that this Kyma holds the module until it admits `version`. */
  const tellRollout = (module: string, channel: string, version: string) =>
    getExternalWorkflowHandle(rolloutWorkflowId({ namespace: kyma.namespace, module, channel })).signal(
      rolloutWaiting,
      { kyma: kyma.name, version },
    );

  const record = (event: KymaEvent): Promise<void> => {
    const o = writing();
    if (!o) return bestEffort.recordKymaEvent({ kyma, uid: st.uid, event }).catch(() => undefined);
    o.event(event);
    return Promise.resolve();
  };

  /** Starts a module's workflow; false when it runs already. */
  async function startModule(module: ResolvedModule, after?: 'remove' | 'release'): Promise<boolean> {
    try {
      await startChild(moduleWorkflow, {
        workflowId: moduleWorkflowId(kyma.namespace, kyma.name, module.name),
        args: [{ kyma, uid: st.uid, module, settings, ...(after ? { after } : {}) }],
        // Module workflows outlive a continue-as-new of this one; they are ended explicitly.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
      });
      return true;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      return false;
    }
  }

  /** Tells the modules (a module workflow that has ended already counts as removed). */
  async function dispatch(d: Dispatch): Promise<void> {
    const tell = (name: string, send: () => Promise<void>) => send().catch(() => st.removed(name));
    const runsHere = (name: string) => hosted.has(name) || (hosting && !handingOver.has(name));
    await Promise.all([
      ...d.start.map(async (module) => {
        if (hosted.has(module.name)) hosted.want(module.name, { uid: st.uid, module });
        else if (runsHere(module.name)) hosted.start({ name: module.name, uid: st.uid, module });
        // Still running (for a Kyma of the same name before this one, say): it adopts this uid.
        else if (!(await startModule(module)))
          await tell(module.name, () => moduleHandle(module.name).signal(desiredModule, { uid: st.uid, module }));
      }),
      ...d.update.map((u) =>
        runsHere(u.name)
          ? hosted.want(u.name, u.desired)
          : tell(u.name, () => moduleHandle(u.name).signal(desiredModule, u.desired)),
      ),
      ...d.remove.map((n) => (runsHere(n) ? hosted.remove(n) : tell(n, () => moduleHandle(n).signal(removeModule)))),
      ...d.release.map((n) =>
        runsHere(n) ? hosted.release(n) : tell(n, () => moduleHandle(n).signal(unmanageModule)),
      ),
      ...d.events.map((event) => record(event)),
    ]);
  }

  if (hosting && !input.carried) {
    // A fresh run: module workflows of a run before that ended abnormally may still run.
    await takeOver(await kcp.runningModuleWorkflows({ kyma }));
  } else if (hosting) {
    // Continued from a run that still had module workflows.
    await takeOver(Object.keys(st.desired));
  }

  for (;;) {
    if (!hosting && patched('hosted-modules')) {
      hosting = true;
      lane.on = true;
      await takeOver(Object.keys(st.desired));
    }
    const step = st.next();
    switch (step.kind) {
      case 'load':
        st.loaded(await kcp.loadKyma({ kyma, ...(step.seen ? { seen: step.seen } : {}) }));
        break;
      case 'resolve':
        st.resolved(
          await kcp.resolveModules({ kyma, snapshot: step.snapshot, ...(step.seen ? { seen: step.seen } : {}) }),
          Date.now(),
          step.only,
        );
        break;
      case 'rolloutReport':
        // Best effort: a rollout that is gone (or not started) has nobody to tell.
        await getExternalWorkflowHandle(
          rolloutWorkflowId({ namespace: kyma.namespace, module: step.module, channel: step.channel }),
        )
          .signal(rolloutReport, { kyma: kyma.name, ...step.report })
          .catch(() => undefined);
        break;
      case 'restartModule':
        if (hosting) {
          // Its workflow ended (handing over, say): this workflow runs the module from here.
          handingOver.delete(step.module.name);
          if (!hosted.has(step.module.name))
            hosted.start({
              name: step.module.name,
              uid: st.uid,
              module: step.module,
              ...(step.after ? { after: step.after } : {}),
            });
        }
        // Running again already (told twice): it is left as it is.
        else await startModule(step.module, step.after);
        break;
      case 'awaitRollout': {
        const { module, channel, version } = step;
        await tellRollout(module, channel, version).catch((err: unknown) => {
          // No rollout workflow for the channel: none was ever started (or not yet).
          if (err instanceof ApplicationFailure && /NotFound|NOT_FOUND/.test(err.type ?? ''))
            st.rolloutMissing(module, channel, version);
        });
        break;
      }
      case 'startRollout': {
        const { module, channel, version } = step;
        // Best effort: a rollout that still cannot be told is asked again on the next resolution.
        await bestEffort
          .startRollout({
            channel: { namespace: kyma.namespace, module, channel },
            version,
            defaultNamespace: settings.defaultNamespace,
          })
          .then(() => tellRollout(module, channel, version))
          .catch(() => undefined);
        break;
      }
      case 'syncRuntime': {
        const { controlPlane, before, known } = step;
        st.runtimeSynced(
          await runtimeKyma
            .syncRuntimeKyma({
              kyma,
              uid: st.uid,
              controlPlane,
              ...(before ? { before } : {}),
              ...(known ? { known } : {}),
            })
            .catch((err: unknown) => ({ failure: failureOf(err) })),
        );
        break;
      }
      case 'syncCatalog':
        st.catalogSynced(
          await runtime
            .syncRuntimeCatalog({ kyma, uid: st.uid, visibility: step.visibility, full: step.full, after: step.after })
            .catch((err: unknown) => ({ failure: failureOf(err) })),
          step.visibility,
        );
        break;
      case 'writeRuntimeStatus':
        await runtimeKyma
          .writeRuntimeStatus({ kyma, status: step.status })
          .catch((err: unknown) => st.runtimeStatusFailed(failureOf(err)));
        break;
      case 'cleanRuntime': {
        const failure = await runtime.cleanRuntime({ kyma, uid: st.uid }).then(
          () => undefined,
          (err: unknown) => failureOf(err),
        );
        if (failure)
          await record({
            type: 'Warning',
            reason: 'RuntimeCleanupFailed',
            message:
              `removing the runtime Kyma, catalog and CRDs from the managed cluster: ${failure.message}; ` +
              `trying again on the next change or the drift timer`,
          });
        st.runtimeCleaned(failure);
        break;
      }
      case 'addFinalizer':
        await kcp.addKymaFinalizer({ kyma, uid: st.uid });
        break;
      case 'removeFinalizer':
        // What is gathered (the Events of the deletion) goes before the Kyma does.
        if (outbox?.pending()) await outbox.flush();
        await kcp.removeKymaFinalizer({ kyma, uid: st.uid });
        break;
      case 'event':
        await record(step.event);
        break;
      case 'dispatch':
        await dispatch(step);
        break;
      case 'cancelModules':
        for (const name of step.names) {
          // A hosted module ends with this workflow.
          if (!hosted.has(name))
            await moduleHandle(name)
              .cancel()
              .catch(() => undefined);
          writing()?.forget(name);
          await kcp.deleteManifest({ kyma, module: name });
        }
        break;
      case 'writeStatus': {
        const o = writing();
        if (o) await o.flush(step.status);
        else await kcp.writeKymaStatus({ kyma, uid: st.uid, status: step.status, at: Date.now() });
        setCurrentDetails(kymaDetails(step.status, step.searchAttributes.omitted));
        // A visibility write costs the server more than anything else a status write brings:
        // only when upsertDue says so (runs recorded before hosting upsert on every status write).
        if (hosting && !upsertDue(upserted, step.searchAttributes, lean)) break;
        upserted = step.searchAttributes;
        upsertSearchAttributes([
          { key: SA.KymaState, value: step.searchAttributes.state },
          { key: SA.Channel, value: step.searchAttributes.channel },
          { key: SA.Modules, value: step.searchAttributes.modules },
          // `ModulesInError = 'greeter'` finds the Kymas whose greeter is in Error.
          ...(hosting
            ? [
                { key: SA.ModulesInError, value: step.searchAttributes.inError },
                { key: SA.ModuleVersions, value: step.searchAttributes.versions },
              ]
            : []),
        ]);
        break;
      }
      case 'wait': {
        const withDrift = step.driftMs !== undefined;
        if (withDrift) drift.arm(step.driftMs!);
        const woken = () => st.awake() || (withDrift && drift.fired()) || (!hosting && takeOverDue);
        // A held upgrade's maintenance window opens at wakeAt: a timer for it, only then.
        let windowOpened = false;
        kymaWaiting = true;
        if (step.wakeAt === undefined) await condition(woken);
        else windowOpened = !(await condition(woken, Math.max(step.wakeAt - Date.now(), 1)));
        kymaWaiting = false;
        const drifted = withDrift && drift.take();
        st.woke(drifted || windowOpened);
        // Hosted modules all wait, none is handed over half-way, every write is done: nothing is lost.
        if (shouldContinueAsNew(settings) && hosted.idle() && handingOver.size === 0 && (outbox?.empty() ?? true))
          await continueAsNew<typeof kymaWorkflow>({ kyma, settings, carried: carried(st.carry()), ...shape });
        break;
      }
      case 'restart':
        // What the Kyma before it was owed is written first.
        if (outbox?.pending()) await outbox.flush();
        await continueAsNew<typeof kymaWorkflow>({ kyma, settings, carried: carried(st.carryToRecreated()), ...shape });
        break;
      case 'end':
        if (outbox?.pending()) await outbox.flush();
        return;
    }
  }
}
