// The baseline: a plain concurrent loop server-side-applies the objects the engine applies
// (rendered bench modules and their default CRs) to fresh namespaces on the same API servers,
// each distinct object once, as fast as the machine allows; and, for promotion, the promoted
// module's new version into the same namespaces.
import { API_VERSION, type KubeObject } from '../src/api/shared';
import { inBatches } from '../src/manifests/batches';
import { renderObjects } from '../src/activities/install/render';
import {
  blobLocation,
  componentLocation,
  configuredComponentLocation,
  namesComponent,
  pullDescriptor,
  rawManifestResource,
} from '../src/oci/ocm';
import { Registries } from '../src/oci/registries';
import { extractSingleYaml } from '../src/oci/tar';
import { KubeApiError } from '../src/k8s/request-errors';
import { type KubeClient } from '../src/k8s/rest-client';
import type { BenchModule } from './fleet';
import { Progress } from './progress';

export interface LoopTarget {
  kcp: KubeClient;
  registryHost: string;
  templateNamespace: string;
  targets: KubeClient[];
}

/** The raw manifest layer of a module version, as the worker fetches it. */
async function manifestYaml(t: LoopTarget, mod: BenchModule, version: string): Promise<string> {
  const template = (await t.kcp.get<KubeObject & { spec: { descriptor: unknown } }>(
    API_VERSION,
    'ModuleTemplate',
    `${mod.name}-${version}`,
    t.templateNamespace,
  ))!;
  const loc = namesComponent(template.spec.descriptor)
    ? componentLocation(template.spec.descriptor, 'bench')
    : configuredComponentLocation({ host: t.registryHost }, `kyma-project.io/module/${mod.name}`, version, 'bench');
  const oci = Registries.unconfigured().client(loc.registry);
  const descriptor = await pullDescriptor(oci, loc);
  const res = rawManifestResource(descriptor, blobLocation(descriptor, loc, 'bench'), 'bench');
  return extractSingleYaml(await oci.pullBlob(res.repository, res.digest), 'bench');
}

/**
 * Applies `modules` at `version` (with their default CRs) to namespaces `<prefix>-0…count-1`
 * (created first unless `namespaces` is false), namespace i on target i mod targets; ms taken.
 */
export async function applyLoop(
  t: LoopTarget,
  modules: BenchModule[],
  version: string,
  count: number,
  prefix: string,
  namespaces = true,
): Promise<number> {
  const layers = await Promise.all(modules.map((mod) => manifestYaml(t, mod, version)));
  const objects: { client: KubeClient; o: KubeObject }[] = [];
  for (let i = 0; i < count; i++) {
    const ns = `${prefix}-${i}`;
    const client = t.targets[i % t.targets.length]!;
    if (namespaces) objects.push({ client, o: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    for (const [j, yaml] of layers.entries()) {
      const mod = modules[j]!;
      const rendered = renderObjects(yaml, {
        kymaNamespace: t.templateNamespace,
        kymaName: ns,
        module: mod.name,
        defaultNamespace: ns,
      }).filter((o) => o.kind !== 'Namespace');
      objects.push(...rendered.map((o) => ({ client, o })));
      objects.push({
        client,
        o: { apiVersion: mod.apiVersion, kind: mod.kind, metadata: { name: 'default', namespace: ns }, spec: {} },
      });
    }
  }
  // A plain loop applies each distinct object once: the CRDs (and other cluster-scoped objects)
  // that every Kyma's modules share go to each cluster once.
  const seen = new Set<string>();
  const distinct = objects.filter(({ client, o }) => {
    const key = `${t.targets.indexOf(client)}/${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const t0 = Date.now();
  const progress = new Progress(`loop baseline (${version}): objects applied`, distinct.length);
  let doneCount = 0;
  const isFirst = ({ o }: { o: KubeObject }) => o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace';
  for (const batch of [distinct.filter(isFirst), distinct.filter((x) => !isFirst(x))]) {
    await inBatches(
      batch,
      async ({ client, o }) => {
        // Like the engine's activities, a timeout or a server error is tried again.
        for (let attempt = 1; ; attempt++) {
          try {
            await client.apply(o);
            break;
          } catch (err) {
            const status = err instanceof KubeApiError ? err.status : 0;
            if (attempt >= 5 || (status >= 400 && status < 500 && status !== 409 && status !== 429)) throw err;
            await new Promise((r) => setTimeout(r, 1000 * attempt));
          }
        }
        progress.update(++doneCount);
      },
      64,
    );
  }
  progress.finish();
  return Date.now() - t0;
}
