// RolloutWorkflow: one per module × channel of a namespace (id rollout/<ns>/<module>/<channel>),
// started by the bridge's first promotion signal and kept for the channel's life. A thin
// interpreter of RolloutState (src/decisions/rollout-state.ts): it plans each promoted version,
// admits Kymas wave by wave with signals, waits for their reports and soak timers, and takes
// pause, resume and abort as updates. It continues as new when its history grows long (the
// rollout goes on in the new run where it was), and for a newer promotion.
//
// Versioning: AUTO_UPGRADE (docs/contributor/workflow-versioning.md). A rollout waits for a promotion, an operator or
// its Kymas, with no timer, for as long as its channel lives: pinned, it would hold its worker
// version from draining. Its next task runs on the current version instead, so a change to this
// file that changes its commands goes behind a patch of `./patches.ts`, which names the release
// that removes it.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { kymaWorkflowId } from '../api/names';
import { SA } from '../api/search-attributes';
import {
  abortRollout,
  admitModule,
  pauseRollout,
  promoted,
  resumeRollout,
  rolloutEnded,
  rolloutPlanQuery,
  rolloutProgress,
  rolloutReport,
  rolloutWaiting,
  rolloutWaves,
  type OperatorAction,
  type RolloutWorkflowInput,
} from '../contract/rollout';
import { DEFAULT_SETTINGS } from '../contract/settings';
import { rolloutDetails } from '../decisions/rollout-details';
import { RolloutState, type RolloutStep } from '../decisions/rollout-state';
import { promotionDiff } from './promotion-diff';

/** Signals to Kymas sent at once, at most (see `toEach`). */
const SIGNAL_BATCH = 500;

const kcp = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * Runs `send` for each Kyma, a batch at a time: a workflow may have at most 2,000 signals to
 * other workflows under way (Temporal's limit), and a fleet's abort or wave may name more.
 */
async function toEach(kymas: string[], send: (kyma: string) => Promise<void>): Promise<void> {
  for (let i = 0; i < kymas.length; i += SIGNAL_BATCH) await Promise.all(kymas.slice(i, i + SIGNAL_BATCH).map(send));
}

/** A rollout's run: its state and whether news came since it last looked. */
class RolloutRun {
  woken = false;
  constructor(
    readonly input: RolloutWorkflowInput,
    readonly st: RolloutState,
  ) {}

  readonly wake = () => (this.woken = true);

  /** Signals, queries and the operators' updates. */
  listen(): void {
    const { st, wake } = this;
    setHandler(promoted, (p) => {
      st.promoted(p);
      wake();
    });
    setHandler(rolloutReport, (r) => {
      st.reported(r);
      wake();
    });
    setHandler(rolloutWaiting, (w) => {
      st.waiting(w);
      wake();
    });
    setHandler(rolloutProgress, () => st.progress());
    setHandler(rolloutWaves, () => st.waves);
    setHandler(rolloutPlanQuery, () => st.planView());
    for (const [update, action] of [
      [pauseRollout, 'pause'],
      [resumeRollout, 'resume'],
      [abortRollout, 'abort'],
    ] as const) {
      const handler = (a: OperatorAction) => {
        st.act(action, a, new Date().toISOString());
        wake();
        return st.progress();
      };
      setHandler(update, handler, {
        validator: (a: OperatorAction | undefined) => {
          const refusal = st.refusal(action, a);
          if (refusal) throw new Error(refusal);
        },
      });
    }
  }

  async plan(step: Extract<RolloutStep, { kind: 'plan' }>): Promise<void> {
    const { channel } = this.input;
    const plan = await kcp.planRollout({
      channel,
      version: step.version,
      ...(step.seen ? { seen: step.seen } : {}),
    });
    // Before the first wave moves (and while `start: manual` waits): what the version changes.
    const diff = !plan.policyProblem
      ? await promotionDiff({
          channel,
          version: step.version,
          kymas: plan.kymas,
          defaultNamespace: this.input.defaultNamespace ?? DEFAULT_SETTINGS.defaultNamespace,
        })
      : undefined;
    this.st.planned(plan, diff);
  }

  async admit(step: Extract<RolloutStep, { kind: 'admit' }>): Promise<void> {
    const { channel } = this.input;
    const gone: string[] = [];
    await toEach(step.kymas, async (kyma) => {
      try {
        await getExternalWorkflowHandle(kymaWorkflowId(channel.namespace, kyma)).signal(admitModule, {
          module: channel.module,
          channel: channel.channel,
          version: step.version,
          ...(step.seen ? { seen: step.seen } : {}),
        });
      } catch {
        gone.push(kyma);
      }
    });
    this.st.gone(gone);
  }

  async notify(step: Extract<RolloutStep, { kind: 'notify' }>): Promise<void> {
    const { channel } = this.input;
    // Best effort: a Kyma whose workflow is gone has nothing to hold.
    await toEach(step.kymas, (kyma) =>
      getExternalWorkflowHandle(kymaWorkflowId(channel.namespace, kyma))
        .signal(rolloutEnded, {
          module: channel.module,
          channel: channel.channel,
          version: step.version,
          message: step.message,
        })
        .catch(() => undefined),
    );
  }

  publish(step: Extract<RolloutStep, { kind: 'publish' }>): void {
    const { channel } = this.input;
    upsertSearchAttributes([
      { key: SA.ModuleName, value: channel.module },
      { key: SA.Channel, value: channel.channel },
      { key: SA.ModuleVersion, value: step.progress.version },
      { key: SA.RolloutState, value: step.progress.phase },
    ]);
  }

  async wait(step: Extract<RolloutStep, { kind: 'wait' }>): Promise<void> {
    this.woken = false;
    if (step.untilMs === undefined) await condition(() => this.woken);
    else await condition(() => this.woken, Math.max(1, step.untilMs - Date.now()));
  }

  /** Whether the run ended (continued as new). */
  async restart(step: Extract<RolloutStep, { kind: 'restart' }>): Promise<boolean> {
    // Nothing taken in may be lost: every handler done, and nothing new since the step was
    // decided (else decide again, with it).
    this.woken = false;
    await condition(allHandlersFinished);
    if (this.woken) return false;
    await continueAsNew<typeof rolloutWorkflow>({ ...this.input, carried: step.carried });
    return true;
  }
}

export async function rolloutWorkflow(input: RolloutWorkflowInput): Promise<void> {
  const st = new RolloutState(
    input.channel,
    input.carried,
    input.continueAsNewAfterEvents ? { continueAsNewAfterEvents: input.continueAsNewAfterEvents } : {},
  );
  const run = new RolloutRun(input, st);
  run.listen();
  for (;;) {
    const info = workflowInfo();
    const step = st.next(Date.now(), { events: info.historyLength, suggested: info.continueAsNewSuggested });
    setCurrentDetails(rolloutDetails(st.progress()));
    switch (step.kind) {
      case 'plan':
        await run.plan(step);
        break;
      case 'admit':
        await run.admit(step);
        break;
      case 'notify':
        await run.notify(step);
        break;
      case 'publish':
        run.publish(step);
        break;
      case 'wait':
        await run.wait(step);
        break;
      case 'restart':
        if (await run.restart(step)) return;
        break;
    }
  }
}

setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, rolloutWorkflow);
