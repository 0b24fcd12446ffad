// What the web view asks and does: the very functions the command line runs (catalog, list, add,
// delete, why), with the user's own kubeconfig. Answers are plain data; nothing of the
// kubeconfig reaches the page.
import { API_VERSION, type KubeObject } from '../../api/shared';
import type { Kyma } from '../../api/kyma';
import type { KlmConfig } from '../../infra/config';
import type { KubeClient } from '../../k8s/rest-client';
import { pulledTemplates } from '../community-catalog';
import { readRecord } from '../direct-record';
import { installTargetOf, moduleKinds, resourcesOfKinds, type KymaRef } from '../kyma-modules';
import { add } from '../module-add';
import { catalog, communityEntries } from '../module-catalog';
import { deleteModule } from '../module-delete';
import { moduleRows, whyModule } from '../module-list';
import type { SourceOptions } from '../module-source';

export interface UiContext {
  kube: KubeClient;
  /** Temporal, for the rollouts of the fleet view. */
  config: Pick<KlmConfig, 'temporal'>;
  directNamespace: string;
  sources: () => SourceOptions;
  crdTimeoutMs: number;
  temporalUi?: string;
  temporalNamespace?: string;
}

export async function catalogOf(c: UiContext, ref: KymaRef) {
  const kyma = await c.kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  const [managed, pulled] = await Promise.all([
    catalog(c.kube, ref.namespace, kyma),
    pulledTemplates(c.kube, ref.namespace),
  ]);
  const templates = await c.kube.list<
    KubeObject & {
      spec: { moduleName?: string; info?: { documentation?: string; icons?: { name: string; link: string }[] } };
    }
  >(API_VERSION, 'ModuleTemplate', { namespace: ref.namespace });
  const info = new Map(
    templates.items.filter((t) => t.spec.moduleName && t.spec.info).map((t) => [t.spec.moduleName!, t.spec.info!]),
  );
  return {
    kyma: !!kyma,
    entries: [...managed, ...communityEntries(pulled, [])].map((e) => ({
      ...e,
      ...(info.get(e.name)?.documentation ? { documentation: info.get(e.name)!.documentation } : {}),
      ...(info.get(e.name)?.icons?.[0] ? { icon: info.get(e.name)!.icons![0]!.link } : {}),
    })),
  };
}

export async function modulesOf(c: UiContext, ref: KymaRef) {
  return await moduleRows(c.kube, ref, c.directNamespace);
}

export async function whyOf(c: UiContext, ref: KymaRef, module: string) {
  return await whyModule(c.kube, ref, module, c.directNamespace, c.temporalUi, c.temporalNamespace);
}

/** The resources people made of the module's kinds: what blocks its deletion. */
export async function blockersOf(
  c: UiContext,
  ref: KymaRef,
  module: string,
): Promise<{ kind: string; namespace?: string; name: string }[]> {
  const kyma = await c.kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  const target = await installTargetOf(c.kube, ref, kyma);
  let found: KubeObject[];
  if (kyma?.spec.modules?.some((m) => m.name === module))
    found = await resourcesOfKinds(target, await moduleKinds(c.kube, ref.namespace, module));
  else {
    const record = await readRecord(target, c.directNamespace, module);
    found = record ? await resourcesOfKinds(target, record.kinds) : [];
  }
  return found.map((r) => ({
    kind: r.kind,
    name: r.metadata.name,
    ...(r.metadata.namespace ? { namespace: r.metadata.namespace } : {}),
  }));
}

export interface AddRequest {
  module: string;
  channel?: string;
  direct?: boolean;
}

export async function addFrom(c: UiContext, ref: KymaRef, r: AddRequest): Promise<string[]> {
  const said: string[] = [];
  await add(c.kube, {
    module: r.module,
    ref,
    ...(r.channel ? { channel: r.channel } : {}),
    ...(r.direct ? { direct: true } : {}),
    directNamespace: c.directNamespace,
    sources: c.sources,
    wait: false,
    timeoutMs: 0,
    crdTimeoutMs: c.crdTimeoutMs,
    say: (line) => said.push(line),
    // Warnings are for the page; progress lines are for a terminal watching a long step.
    progress: (line) => {
      if (line.startsWith('warning:')) said.unshift(line);
    },
  });
  return said;
}

/** Deletes the module; `deleteResources`: the page showed the blockers and the user confirmed. */
export async function deleteFrom(
  c: UiContext,
  ref: KymaRef,
  module: string,
  deleteResources: boolean,
): Promise<string[]> {
  const said: string[] = [];
  await deleteModule(c.kube, {
    module,
    ref,
    directNamespace: c.directNamespace,
    ...(deleteResources ? { deleteResources: true, autoApprove: true } : {}),
    wait: false,
    timeoutMs: 120_000,
    confirm: () => Promise.resolve(false),
    say: (line) => said.push(line),
    progress: () => undefined,
  });
  return said;
}
