// KymaWorkflow: one per Kyma (id kyma/<namespace>/<name>). A thin interpreter of KymaRun
// (src/decisions/kyma-run.ts), which holds the Kyma's state and its modules': it starts the work
// the run asks for (./kyma-actions.ts, ./module-actions.ts, the Kyma's writes), hands back how
// each piece went, and waits for news, the drift timer or the alarm, until the run ends or
// continues as new. One loop, whatever the number of modules: no coroutine per module, and at
// most `moduleParallelism` module activities under way. A run is pinned to the worker deployment
// version it started on; it continues as new, onto the current version, when that changes, when
// its history grows long, or when it is `maxRunAgeMs` old.
import {
  makeContinueAsNewFunc,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { KymaStatusInput } from '../api/kyma';
import { SA } from '../api/search-attributes';
import { admitModule, rolloutEnded } from '../contract/rollout';
import { kymaStatusQuery } from '../contract/queries';
import { catalogChanged, kymaChanged, modulesChanged, templatesChanged, workflowEnded } from '../contract/signals';
import type { KymaWorkflowInput } from '../contract/workflow-inputs';
import { firstRead, KymaRun, type Work } from '../decisions/kyma-run';
import { upsertDue, type SearchAttributeValues } from '../decisions/search-attribute-values';
import { kymaDetails } from '../decisions/workflow-details';
import { controlPlane } from './activity-options';
import { kymaActions } from './kyma-actions';
import { LocalLane } from './local-lane';
import { moduleActions } from './module-actions';
import { searchAttributesAtStart } from './search-attributes-at-start';
import { Alarm, DriftTimer } from './timers';
import { Wake } from './wake';

/**
 * A new run starts on the current worker deployment version, whichever version this run is
 * pinned to (docs/contributor/workflow-versioning.md): how runs move to new code and new settings.
 */
const continueOnCurrentVersion = makeContinueAsNewFunc<typeof kymaWorkflow>({
  initialVersioningBehavior: 'AUTO_UPGRADE',
});

export async function kymaWorkflow(input: KymaWorkflowInput): Promise<void> {
  const { kyma } = input;
  // One local activity: the settings of the worker version the run is on, and the Kyma's first read.
  const { settings, loaded } = await controlPlane.beginKymaRun(firstRead(input));
  const wake = new Wake();
  const run = new KymaRun({
    kyma,
    settings,
    runStartedAt: workflowInfo().runStartTime.getTime(),
    ...(input.carried ? { carried: input.carried } : {}),
    loaded,
    woken: () => wake.ring(),
  });
  const [drift, alarm] = [new DriftTimer(run.endsAt), new Alarm()];
  setHandler(kymaChanged, (seen) => run.changed(seen));
  setHandler(templatesChanged, (seen) => run.changed(seen));
  setHandler(catalogChanged, () => run.catalogChanged());
  setHandler(admitModule, (a) => run.admit(a));
  setHandler(rolloutEnded, (n) => run.rolloutEnded(n));
  setHandler(workflowEnded, (e) => run.workflowEnded(e));
  setHandler(modulesChanged, (changes) => run.modulesChanged(changes));
  setHandler(kymaStatusQuery, () => run.status());

  // Local activities take turns: a replay resolves them in the order of their markers.
  const lane = new LocalLane();
  const kymaSteps = kymaActions(kyma, settings, lane);
  const moduleSteps = moduleActions(kyma, settings, lane);
  const writes = lane.serial(controlPlane);
  /** The search attribute values upserted last (at first: those the run started with). */
  let upserted = searchAttributesAtStart();
  /** A piece of work that failed in a way no state takes (a bug): the task fails, and is tried again. */
  let broken: Error | undefined;

  /** Starts a piece of work; its promise is the activity's own and one `then` (the sandbox pays for each promise). */
  function perform(w: Work) {
    switch (w.kind) {
      case 'kyma':
        return kymaSteps.run(w.action, run.kyma.uid);
      case 'module':
      case 'installs':
      case 'modules':
        return moduleSteps.perform(w, run.kyma.uid);
      case 'write':
        // `at`, the workflow's time: a retry of this task writes with a later one, so a late write of this attempt is not made over it.
        return writes.writeKymaChanges({ kyma, uid: run.kyma.uid, ...w.writes, at: w.at }).then((done) => {
          if (w.status && w.writes.status) announce(w.writes.status, w.status.searchAttributes);
          return done;
        });
    }
  }

  /** What the Temporal UI shows, and what visibility finds the Kyma by (`ModulesInError = 'greeter'`). */
  function announce(status: KymaStatusInput, sa: SearchAttributeValues) {
    setCurrentDetails(kymaDetails(status, sa.omitted));
    if (!upsertDue(upserted, sa)) return;
    upserted = sa;
    upsertSearchAttributes([
      { key: SA.KymaState, value: sa.state },
      { key: SA.Channel, value: sa.channel },
      { key: SA.Modules, value: sa.modules },
      { key: SA.ModulesInError, value: sa.inError },
      { key: SA.ModuleVersions, value: sa.versions },
    ]);
  }

  for (;;) {
    for (const w of run.take(Date.now()))
      void perform(w).then(
        (outcome) => run.done(w, outcome, Date.now()),
        (err: unknown) => {
          // A cancelled workflow's work ends so too: the wait below ends the run with the cancellation first.
          broken = new Error(`${w.kind} work failed: ${(err as Error).message}`);
          wake.ring();
        },
      );
    drift.arm(run.takeDriftArm(Date.now()), () => run.driftFired());
    drift.coverEnd(run.quiet(), Date.now(), () => (run.dirty = true));
    alarm.set(run.alarmAt(), Date.now(), () => (run.dirty = true));
    const info = workflowInfo();
    const history = { events: info.historyLength, suggested: info.continueAsNewSuggested, versionChanged: false };
    let stop = run.stop({ ...history, now: Date.now() });
    if (!stop && info.targetWorkerDeploymentVersionChanged && run.versionCheckDue(Date.now())) {
      const current = await controlPlane.currentWorkerVersion();
      const moved = current !== undefined && current !== info.currentDeploymentVersion?.buildId;
      if (moved) stop = run.stop({ ...history, versionChanged: true, now: Date.now() });
    }
    if (stop?.kind === 'end') return;
    if (stop) return await continueOnCurrentVersion({ kyma, carried: stop.carried });
    await wake.until(() => run.dirty || broken !== undefined);
    if (broken) throw broken;
  }
}

// Pinned: a run replays only on the code that started it, so Kyma workflow code needs no patches.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, kymaWorkflow);
