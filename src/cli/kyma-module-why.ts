// klm module why, for a module of a Kyma: its state, reason and message, versions, its last
// Events, its workflow (and a link to it in Temporal's UI).
import { kymaWorkflowId } from '../api/names';
import type { KubeObject } from '../api/shared';
import type { KymaRef } from '../contract/kyma';
import { moduleVersions } from '../decisions/module-versions';
import type { KubeClient } from '../k8s/rest-client';
import { catalogObjects } from './module-catalog';
import { readKyma, resolutionOf } from './kyma-modules';
import { Refused } from './output';
import { workflowLink } from './temporal-link';
import type { Why as PageWhy } from './ui/app/types';

/** What `why` answers: what the web page shows of it (its `Why`), and more. */
export interface Why extends PageWhy {
  module: string;
  kyma: string;
  /** Installed by klm directly: from which template, into which namespace. */
  direct?: { template: string; community: boolean; namespace: string };
  events: { reason: string; message: string; type?: string; lastTimestamp?: string }[];
}

/** The last ten Events of the Kyma that name the module, oldest first. */
async function moduleEvents(kube: KubeClient, ref: KymaRef, module: string): Promise<Why['events']> {
  const { items } = await kube.list<
    KubeObject & { reason?: string; message?: string; type?: string; lastTimestamp?: string; eventTime?: string }
  >('v1', 'Event', {
    namespace: ref.namespace,
    fieldSelector: `involvedObject.kind=Kyma,involvedObject.name=${ref.name}`,
  });
  return items
    .filter((e) => e.message?.includes(module))
    .sort((a, b) => (a.lastTimestamp ?? a.eventTime ?? '').localeCompare(b.lastTimestamp ?? b.eventTime ?? ''))
    .slice(-10)
    .map((e) => ({
      reason: e.reason ?? '',
      message: e.message ?? '',
      ...(e.type ? { type: e.type } : {}),
      ...((e.lastTimestamp ?? e.eventTime) ? { lastTimestamp: e.lastTimestamp ?? e.eventTime } : {}),
    }));
}

/** Everything klm knows of why a module is where it is. */
export async function why(
  kube: KubeClient,
  ref: KymaRef,
  module: string,
  temporalUi?: string,
  temporalNamespace?: string,
): Promise<Why> {
  const kyma = await readKyma(kube, ref);
  const spec = kyma.spec.modules?.find((m) => m.name === module);
  const status = kyma.status?.modules?.find((m) => m.name === module);
  if (!spec && !status) throw new Refused(`module ${module} is not in Kyma ${ref.namespace}/${ref.name}`);
  const v = moduleVersions(
    status,
    spec ? await resolutionOf(kyma, spec, await catalogObjects(kube, ref.namespace)) : undefined,
  );
  const events = await moduleEvents(kube, ref, module);
  const channel = spec?.channel ?? status?.channel;
  // The Kyma's workflow runs its modules.
  const workflowId = kymaWorkflowId(ref.namespace, ref.name);
  return {
    module,
    kyma: `${ref.namespace}/${ref.name}`,
    ...(status?.state ? { state: status.state } : {}),
    ...(status?.message ? { message: status.message } : {}),
    ...(v.installed ? { installedVersion: v.installed } : {}),
    ...(v.wanted ? { desiredVersion: v.wanted } : {}),
    ...(channel ? { channel } : {}),
    workflowId,
    ...(temporalUi ? { temporalUi: workflowLink(temporalUi, temporalNamespace, workflowId) } : {}),
    events,
  };
}

export function whyText(w: Why): string {
  const lines = [
    w.direct
      ? `module ${w.module}, installed directly by klm into namespace ` +
        `${w.direct.namespace}${w.direct.community ? ' (a community module)' : ''}: ` +
        `${w.state ?? 'no state yet'}`
      : `module ${w.module} of Kyma ${w.kyma}: ${w.state ?? 'no state yet'}`,
    ...(w.message ? [`  ${w.message}`] : []),
    `installed version: ${w.installedVersion ?? '-'}; wanted: ${w.desiredVersion ?? '-'}${w.channel ? ` (channel ${w.channel})` : ''}`,
    w.direct
      ? `from ModuleTemplate ${w.direct.template}; no workflow follows it (\`klm module add\` again repairs or upgrades it)`
      : `workflow: ${w.workflowId}${w.temporalUi ? `\n  ${w.temporalUi}` : ''}`,
  ];
  if (w.events.length)
    lines.push(
      'events:',
      ...w.events.map((e) =>
        `  ${e.lastTimestamp ?? ''} ${e.type ?? ''} ${e.reason}: ${e.message}`.replace(/ {2,}/g, ' ').trimEnd(),
      ),
    );
  return lines.join('\n');
}
