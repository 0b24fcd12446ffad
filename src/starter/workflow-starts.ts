// How the bridge starts and signals workflows: the start options of a Kyma's workflow and of a
// channel's rollout workflow (id, task queue, input, search attributes) for signalWithStart, and
// the one Temporal call per routed signal (./routing.ts): a signal to the running workflow, or
// signalWithStart where the signal may start it (a plain start for a Kyma without status, and a
// signal after it if its workflow runs already).
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { kymaWorkflowId } from '../api/names';
import { SA } from '../api/search-attributes';
import {
  promoted,
  ROLLOUT_WORKFLOW,
  rolloutStart,
  type Promotion,
  type RolloutWorkflowInput,
} from '../contract/rollout';
import type { SeenVersions } from '../contract/seen-versions';
import { WORKFLOW_TASK_TIMEOUT, type ReconcileSettings } from '../contract/settings';
import {
  catalogChanged,
  kymaChanged,
  modulesChanged,
  templatesChanged,
  workflowEnded,
  type WorkflowEnded,
} from '../contract/signals';
import { KYMA_WORKFLOW, type KymaWorkflowInput } from '../contract/workflow-inputs';
import type { KymaRef } from '../contract/kyma';
import { fitKeywordList } from '../decisions/search-attribute-values';
import type { FreshKyma, Signal } from './routing';

/**
 * What every start needs: the task queue its workers poll, and the settings (a rollout's default
 * namespace; a Kyma's workflow reads its own from the worker it runs on).
 */
export interface StartOptions {
  taskQueue: string;
  settings: ReconcileSettings;
}

type KymaWorkflowFn = (input: KymaWorkflowInput) => Promise<void>;
type RolloutWorkflowFn = (input: RolloutWorkflowInput) => Promise<void>;

/**
 * How the bridge starts the workflow of Kyma `ns/name` (with signalWithStart) when it does not
 * run; `seen`: the versions the bridge saw, which the run's first read reflects; `fresh`: a Kyma
 * without status, whose workflow is found as Processing, with its channel and modules, from its
 * start (and needs no upsert of the same with its first status).
 */
export function kymaStart(
  { namespace, name }: KymaRef,
  { taskQueue }: StartOptions,
  seen?: SeenVersions,
  fresh?: FreshKyma,
) {
  return {
    workflowId: kymaWorkflowId(namespace, name),
    taskQueue,
    args: [{ kyma: { namespace, name }, ...(seen ? { seen } : {}) }] as [KymaWorkflowInput],
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
    typedSearchAttributes: [
      { key: SA.KymaName, value: name },
      { key: SA.KymaNamespace, value: namespace },
      ...(fresh
        ? [
            { key: SA.KymaState, value: 'Processing' },
            { key: SA.Channel, value: fresh.channel },
            { key: SA.Modules, value: fitKeywordList(fresh.modules).values },
          ]
        : []),
    ] as SearchAttributePair[],
  };
}

/** Sends signal `s` (./routing.ts) through `temporal`; a rollout or a Kyma's workflow it may start is started with `o`. */
export function send(temporal: Client, o: StartOptions, s: Signal): Promise<unknown> {
  if (s.signal === 'promoted')
    return temporal.workflow.signalWithStart<RolloutWorkflowFn, [Promotion]>(ROLLOUT_WORKFLOW, {
      ...rolloutStart(s.channel, o.taskQueue, o.settings.defaultNamespace),
      signal: promoted,
      signalArgs: [s.promotion],
    });
  const handle = () => temporal.workflow.getHandle(kymaWorkflowId(s.kyma.namespace, s.kyma.name));
  switch (s.signal) {
    case 'kymaChanged':
      if (s.start && s.fresh)
        // A start that carries the news leaves one history event fewer than signalWithStart.
        return temporal.workflow
          .start<KymaWorkflowFn>(KYMA_WORKFLOW, {
            ...kymaStart(s.kyma, o, s.args[0], s.fresh),
            workflowIdConflictPolicy: 'FAIL',
          })
          .catch((err: unknown) => {
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
            return handle().signal(kymaChanged, ...s.args);
          });
      return s.start
        ? temporal.workflow.signalWithStart<KymaWorkflowFn, [SeenVersions?]>(KYMA_WORKFLOW, {
            ...kymaStart(s.kyma, o, s.args[0]),
            signal: kymaChanged,
            signalArgs: s.args,
          })
        : handle().signal(kymaChanged, ...s.args);
    case 'workflowEnded':
      return temporal.workflow.signalWithStart<KymaWorkflowFn, [WorkflowEnded]>(KYMA_WORKFLOW, {
        ...kymaStart(s.kyma, o),
        signal: workflowEnded,
        signalArgs: [s.ended],
      });
    case 'templatesChanged':
      return handle().signal(templatesChanged, ...s.args);
    case 'catalogChanged':
      return handle().signal(catalogChanged);
    case 'modulesChanged':
      return handle().signal(modulesChanged, s.changes);
  }
}
