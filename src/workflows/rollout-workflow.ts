// RolloutWorkflow: one per module × channel of a namespace (id rollout/<ns>/<module>/<channel>),
// started by the bridge's first promotion signal and kept for the channel's life. A thin
// interpreter of RolloutState (src/decisions/rollout-state.ts): it plans each promoted version,
// admits Kymas wave by wave with signals, waits for their reports and soak timers, and takes
// pause, resume and abort as updates. It continues as new when its history grows long (the
// rollout goes on in the new run where it was), and for a newer promotion.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
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
import { RolloutState } from '../decisions/rollout-state';
import { promotionDiff } from './promotion-diff';

/** Signals to Kymas sent at once, at most (see `toEach`). */
const SIGNAL_BATCH = 500;

const kcp = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function rolloutWorkflow(input: RolloutWorkflowInput): Promise<void> {
  const { channel } = input;
  const st = new RolloutState(
    channel,
    input.carried,
    input.continueAsNewAfterEvents ? { continueAsNewAfterEvents: input.continueAsNewAfterEvents } : {},
  );
  /**
   * Runs `send` for each Kyma, a batch at a time: a workflow may have at most 2,000 signals to
   * other workflows under way (Temporal's limit), and a fleet's abort or wave may name more.
   */
  async function toEach(kymas: string[], send: (kyma: string) => Promise<void>): Promise<void> {
    for (let i = 0; i < kymas.length; i += SIGNAL_BATCH) await Promise.all(kymas.slice(i, i + SIGNAL_BATCH).map(send));
  }
  let woken = false;
  const wake = () => (woken = true);
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

  for (;;) {
    const info = workflowInfo();
    const step = st.next(Date.now(), { events: info.historyLength, suggested: info.continueAsNewSuggested });
    setCurrentDetails(rolloutDetails(st.progress()));
    switch (step.kind) {
      case 'plan': {
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
              defaultNamespace: input.defaultNamespace ?? DEFAULT_SETTINGS.defaultNamespace,
            })
          : undefined;
        st.planned(plan, diff);
        break;
      }
      case 'admit': {
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
        st.gone(gone);
        break;
      }
      case 'notify':
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
        break;
      case 'publish':
        upsertSearchAttributes([
          { key: SA.ModuleName, value: channel.module },
          { key: SA.Channel, value: channel.channel },
          { key: SA.ModuleVersion, value: step.progress.version },
          { key: SA.RolloutState, value: step.progress.phase },
        ]);
        break;
      case 'wait': {
        woken = false;
        if (step.untilMs === undefined) await condition(() => woken);
        else await condition(() => woken, Math.max(1, step.untilMs - Date.now()));
        break;
      }
      case 'restart':
        // Nothing taken in may be lost: every handler done, and nothing new since the step was
        // decided (else decide again, with it).
        woken = false;
        await condition(allHandlersFinished);
        if (woken) break;
        await continueAsNew<typeof rolloutWorkflow>({ ...input, carried: step.carried });
        return;
    }
  }
}
