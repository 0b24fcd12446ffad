// The fleet view for operators: the Kymas of a namespace by state, the modules in Error across
// them, and each channel's rollout, steered with the same updates as `klm rollout`.
import type { Kyma } from '../../api/kyma';
import type { ModuleReleaseMeta } from '../../api/modulereleasemeta';
import { API_VERSION, type KubeObject } from '../../api/shared';
import type { KlmConfig } from '../../infra/config';
import type { KubeClient } from '../../k8s/rest-client';
import { rollout, rollouts, type ChannelRollout, type RolloutAction } from '../rollout';

import type { Fleet } from './app/types';

export async function fleetOf(kube: KubeClient, namespace: string): Promise<Fleet> {
  // From the API server's watch cache: a view, not a decision.
  const { items } = await kube.list<Kyma & KubeObject>(API_VERSION, 'Kyma', { namespace, resourceVersion: '0' });
  const counts: Record<string, number> = {};
  const errors: Fleet['errors'] = [];
  const kymas = items
    .map((k) => {
      const state = k.status?.state ?? 'Pending';
      counts[state] = (counts[state] ?? 0) + 1;
      const failing = (k.status?.modules ?? []).filter((m) => m.state === 'Error');
      for (const m of failing) errors.push({ kyma: k.metadata.name, module: m.name, message: m.message ?? '' });
      return {
        name: k.metadata.name,
        state,
        channel: k.spec.channel,
        modules: k.spec.modules?.length ?? 0,
        errors: failing.length,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    namespace,
    counts,
    kymas,
    errors: errors.sort((a, b) => a.kyma.localeCompare(b.kyma) || a.module.localeCompare(b.module)),
  };
}

/** Every channel's rollout in the namespace (each channel its ModuleReleaseMetas name). */
export async function rolloutsOf(
  kube: KubeClient,
  namespace: string,
  config: Pick<KlmConfig, 'temporal'>,
): Promise<ChannelRollout[]> {
  const { items } = await kube.list<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta', { namespace });
  const channels = items.flatMap((m) =>
    [...(m.spec.channels ?? []).map((c) => c.channel), ...(m.spec.mandatory ? ['mandatory'] : [])].map((channel) => ({
      namespace,
      module: m.spec.moduleName,
      channel,
    })),
  );
  if (!channels.length) return [];
  return (await rollouts(channels, config)).sort(
    (a, b) => a.module.localeCompare(b.module) || a.channel.localeCompare(b.channel),
  );
}

export async function steer(
  namespace: string,
  module: string,
  channel: string,
  action: Exclude<RolloutAction, 'status'>,
  reason: string,
  config: Pick<KlmConfig, 'temporal'>,
): Promise<unknown> {
  return JSON.parse(
    await rollout({ action, channel: { namespace, module, channel }, reason, output: 'json' }, config),
  ) as unknown;
}
