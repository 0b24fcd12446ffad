// What a rollout reads in the control plane: the Kymas a promotion moves (from the worker's
// cache) and the channel's rollout policy (the ConfigMap klm-rollout-policy).
import { Context } from '@temporalio/activity';
import { parse } from 'yaml';
import type { Kyma } from '../api/kyma';
import { API_VERSION, ROLLOUT_POLICY_CONFIGMAP, type KubeObject } from '../api/shared';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  promoted,
  ROLLOUT_WORKFLOW,
  rolloutWaiting,
  rolloutWorkflowId,
  rolloutStart,
  type ChannelRef,
  type Promotion,
  type RolloutPlan,
  type RolloutWorkflowInput,
} from '../contract/rollout';
import type { SeenVersions } from '../contract/seen-versions';
import { rolloutCandidates } from '../decisions/rollout-plan';
import { DEFAULT_ROLLOUT_POLICY, rolloutPolicyOf } from '../decisions/rollout-policy';
import type { ObjectCache } from '../k8s/object-cache';
import type { KubeClient } from '../k8s/rest-client';
import { readPolicyConfigMap } from './policy-configmap';

export interface PlanRolloutInput {
  channel: ChannelRef;
  version: string;
  seen?: SeenVersions;
}

/** The channel's policy: its key in the ConfigMap, else `default`, else the built-in default. */
async function rolloutPolicyFor(
  kcp: KubeClient,
  c: ChannelRef,
): Promise<Pick<RolloutPlan, 'policy' | 'policyProblem'>> {
  const cm = await readPolicyConfigMap(kcp, c.namespace, ROLLOUT_POLICY_CONFIGMAP);
  if ('problem' in cm) return { policy: DEFAULT_ROLLOUT_POLICY, policyProblem: cm.problem };
  const key = cm.data?.[c.channel] !== undefined ? c.channel : 'default';
  const text = cm.data?.[key];
  if (text === undefined) return { policy: DEFAULT_ROLLOUT_POLICY };
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    return {
      policy: DEFAULT_ROLLOUT_POLICY,
      policyProblem: `key ${key} of ConfigMap ${c.namespace}/${ROLLOUT_POLICY_CONFIGMAP} is not YAML: ${(err as Error).message.split('\n')[0]}`,
    };
  }
  const r = rolloutPolicyOf(raw);
  if (r.problem !== undefined)
    return {
      policy: DEFAULT_ROLLOUT_POLICY,
      policyProblem: `key ${key} of ConfigMap ${c.namespace}/${ROLLOUT_POLICY_CONFIGMAP}: ${r.problem}`,
    };
  return { policy: r.policy };
}

export interface StartRolloutInput {
  channel: ChannelRef;
  version: string;
  defaultNamespace: string;
  /** The Kyma that waits for the rollout (it is told so once the rollout runs). */
  waiting?: string;
}

export interface TellRolloutInput {
  channel: ChannelRef;
  /** The Kyma that holds the module until the rollout admits `version`. */
  kyma: string;
  version: string;
}

export function rolloutActivities(kcp: KubeClient, cache: ObjectCache) {
  return {
    /**
     * Starts the channel's rollout of `version` (or tells a running one), as the bridge does on
     * a promotion: a Kyma holding a module for a version no rollout governs asks for it.
     */
    async startRollout({ channel, version, defaultNamespace, waiting }: StartRolloutInput): Promise<void> {
      const { client, info } = Context.current();
      const handle = await client.workflow.signalWithStart<(input: RolloutWorkflowInput) => Promise<void>, [Promotion]>(
        ROLLOUT_WORKFLOW,
        {
          ...rolloutStart(channel, info.taskQueue, defaultNamespace),
          signal: promoted,
          signalArgs: [{ version }],
        },
      );
      if (waiting) await handle.signal(rolloutWaiting, { kyma: waiting, version });
    },
    /**
     * Tells the channel's rollout that a Kyma holds the module until it admits `version`; false
     * when no rollout runs for the channel (none was started, or not yet).
     */
    async tellRollout({ channel, kyma, version }: TellRolloutInput): Promise<{ found: boolean }> {
      try {
        await Context.current()
          .client.workflow.getHandle(rolloutWorkflowId(channel))
          .signal(rolloutWaiting, { kyma, version });
        return { found: true };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return { found: false };
        throw err;
      }
    },
    /** The Kymas a promotion of the channel to `version` moves, in wave order, and the policy to move them by. */
    async planRollout({ channel, version, seen }: PlanRolloutInput): Promise<RolloutPlan> {
      const kymas = await cache.list<Kyma & KubeObject>(API_VERSION, 'Kyma', channel.namespace, seen?.Kyma);
      return { ...rolloutCandidates(kymas, channel, version), ...(await rolloutPolicyFor(kcp, channel)) };
    },
  };
}
