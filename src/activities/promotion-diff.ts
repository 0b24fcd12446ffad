// The object-level difference a promotion makes, before it is made: per Kyma the installed
// rendering (the template its Manifest names) against the new version's, both rendered as an
// install would render them for that Kyma. Kymas that run the same template in the same default
// namespace share one rendering, so a fleet costs a handful of fetches (layers are cached by
// digest). Only object names leave this activity: manifests never enter a workflow's history.
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { Manifest } from '../api/manifest';
import type { ModuleTemplate } from '../api/moduletemplate';
import { defaultNamespaceFor, manifestName } from '../api/names';
import { API_VERSION, type KubeObject, type ObjectRef } from '../api/shared';
import type { ResolvedModule } from '../contract/module';
import type { ChannelRef, PromotionDiff, PromotionDiffGroup } from '../contract/rollout';
import { diffObjects } from '../decisions/object-diff';
import type { ObjectCache } from '../k8s/object-cache';
import { RenderError } from '../manifests/parse';
import type { OcmRegistry } from '../oci/ocm';
import type { BlobCache } from './blob-cache';
import { ModuleFetcher, type Fetched } from './install/fetch';
import { layerObjects } from './install/render';

export interface DiffPromotionInput {
  channel: ChannelRef;
  version: string;
  /** The Kymas the promotion moves. */
  kymas: string[];
  /** The default namespace setting (`{kyma}`: the Kyma's name). */
  defaultNamespace: string;
}

/** Why something could not be rendered, as `Reason: message`. */
function problemOf(err: unknown): string {
  if (err instanceof ApplicationFailure) return `${err.type ?? 'Error'}: ${err.message}`;
  if (err instanceof RenderError) return `${err.reason}: ${err.message}`;
  return `Error: ${(err as Error).message}`;
}

export function promotionDiffActivities(kcp: ObjectCache, cache: BlobCache, registry?: OcmRegistry) {
  const fetcher = new ModuleFetcher(kcp, cache, registry);

  /**
   * The raw manifest of `template` and the manager it declares. Neither depends on
   * `defaultNamespace` (the fetch uses it only to place the default CR, which the diff leaves
   * out; rendering places the objects), so one fetch serves every group of a call.
   */
  async function fetchTemplate(
    c: ChannelRef,
    template: string,
    defaultNamespace: string,
  ): Promise<Pick<Fetched, 'manifest'> & { layer: string; manager?: ObjectRef }> {
    const t = await kcp.get<ModuleTemplate & KubeObject>(API_VERSION, 'ModuleTemplate', template, c.namespace);
    if (!t)
      throw ApplicationFailure.nonRetryable(
        `no ModuleTemplate "${template}" in namespace "${c.namespace}"`,
        'TemplateNotFound',
      );
    const module: ResolvedModule = {
      name: c.module,
      channel: c.channel,
      version: t.spec.version ?? template.slice(c.module.length + 1),
      customResourcePolicy: 'CreateAndDelete',
      template: { name: template, namespace: c.namespace, generation: t.metadata.generation ?? 0 },
    };
    const { fetched, manifest } = await fetcher.fetch(module, defaultNamespace);
    heartbeat();
    return { manifest, layer: fetched.layer.digest, ...(fetched.manager ? { manager: fetched.manager } : {}) };
  }

  return {
    /**
     * Per group of Kymas (same installed template, same default namespace): the objects a
     * promotion to `version` adds, changes and removes. Applies nothing.
     */
    async diffPromotion({ channel, version, kymas, defaultNamespace }: DiffPromotionInput): Promise<PromotionDiff> {
      const groups = new Map<string, { from?: string; template?: string; namespace: string; kymas: string[] }>();
      for (const kyma of kymas) {
        const m = await kcp.get<Manifest & KubeObject>(
          API_VERSION,
          'Manifest',
          manifestName(kyma, channel.module),
          channel.namespace,
        );
        const template =
          typeof m?.spec.install.source.template === 'string' ? m.spec.install.source.template : undefined;
        const namespace = defaultNamespaceFor(defaultNamespace, kyma);
        const key = JSON.stringify([template, namespace]);
        const g = groups.get(key) ?? { ...(template ? { template, from: m?.spec.version } : {}), namespace, kymas: [] };
        g.kymas.push(kyma);
        groups.set(key, g);
      }
      const target = `${channel.module}-${version}`;
      // Each template is fetched once per call, however many default namespaces render it.
      const fetched = new Map<string, ReturnType<typeof fetchTemplate>>();
      const rendered = async (template: string, kyma: string, defaultNamespace: string): Promise<KubeObject[]> => {
        let f = fetched.get(template);
        if (!f) fetched.set(template, (f = fetchTemplate(channel, template, defaultNamespace)));
        const { manifest, layer, manager } = await f;
        return layerObjects(layer, manifest, {
          kymaNamespace: channel.namespace,
          kymaName: kyma,
          module: channel.module,
          defaultNamespace,
          ...(manager ? { manager } : {}),
        });
      };
      const out: PromotionDiffGroup[] = [];
      for (const g of groups.values()) {
        const head = { ...(g.from ? { from: g.from } : {}), kymas: g.kymas };
        try {
          // The Kyma's name labels both renderings alike: the first Kyma's stands for the group.
          const before = g.template ? await rendered(g.template, g.kymas[0]!, g.namespace) : [];
          const after = await rendered(target, g.kymas[0]!, g.namespace);
          out.push({ ...head, ...diffObjects(before, after) });
        } catch (err) {
          out.push({ ...head, added: [], changed: [], removed: [], problem: problemOf(err) });
        }
        heartbeat();
      }
      return { version, groups: out };
    },
  };
}
