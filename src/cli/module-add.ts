// klm module add: to the Kyma (the lifecycle manager installs it), or directly (klm installs it):
// a community module (`namespace/template`), a cluster without the Kyma, or --direct beside one.
import { readFile } from 'node:fs/promises';
import type { CustomResourcePolicy, Kyma } from '../api/kyma';
import { API_VERSION, apiVersionOf, type KubeObject } from '../api/shared';
import { isNotFound } from '../k8s/request-errors';
import { parseManifest, RenderError } from '../manifests/parse';
import type { KubeClient } from '../k8s/rest-client';
import { directInstall } from './direct-install';
import { readRecord } from './direct-record';
import { directState, runningVersionOf, type Manager } from './direct-status';
import {
  addModule,
  installTargetOf,
  readKyma,
  resolutionOf,
  setManaged,
  targetOf,
  waitForModule,
  type KymaRef,
} from './kyma-modules';
import { catalogObjects, type CatalogObjects } from './module-catalog';
import type { SourceOptions, Template } from './module-source';
import { catalogTemplate, communityTemplate, isCommunityName } from './module-templates';
import { Refused, WaitTimeoutError } from './output';

export interface AddInput {
  module: string;
  ref: KymaRef;
  channel?: string;
  version?: string;
  policy?: CustomResourcePolicy;
  /**
   * The policy of a module the Kyma or a direct install does not have yet, when none is asked:
   * `klm module add` gives Ignore, as the Kyma CLI does; without it, CreateAndDelete (the CRD's
   * default). A module it has keeps its policy.
   */
  newPolicy?: CustomResourcePolicy;
  /** --config-cr-path: the module's CR from a file, instead of its default CR (policy Ignore). */
  crPath?: string;
  /** Asks whether to install a community module; none: install it without asking (--auto-approve). */
  approve?: (question: string) => Promise<boolean>;
  /** --direct: install beside the Kyma, not through it. */
  direct?: boolean;
  /** Where direct installs put namespaced objects that name no namespace, and klm's record. */
  directNamespace: string;
  /** How a direct install reaches registries (read only when one is made). */
  sources: () => SourceOptions;
  wait: boolean;
  timeoutMs: number;
  crdTimeoutMs: number;
  say: (line: string) => void;
  progress: (line: string) => void;
}

async function crObjects(file: string, namespace: string): Promise<KubeObject[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new Refused(`--config-cr-path ${file} cannot be read`);
  }
  try {
    return parseManifest(text, namespace);
  } catch (err) {
    if (err instanceof RenderError) throw new Refused(`--config-cr-path ${file}: ${err.message}`);
    throw err;
  }
}

/** Waits until the direct install is Ready; Error ends the wait as a failure. */
async function waitDirect(
  target: KubeClient,
  namespace: string,
  module: string,
  timeoutMs: number,
  progress: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let said = '';
  for (;;) {
    const record = await readRecord(target, namespace, module);
    if (!record)
      throw new Refused(
        `module ${module} is no longer installed directly (its record in namespace ${namespace} is gone)`,
      );
    const s = await directState(target, record);
    if (s.state === 'Ready') return;
    const now = `${module}: ${s.state} (${s.message})`;
    if (now !== said) progress((said = now));
    if (s.state === 'Error') throw new Refused(`module ${module} is in Error: ${s.message}`);
    if (Date.now() > deadline)
      throw new WaitTimeoutError(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for module ${module}; last: ${said}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function add(kube: KubeClient, a: AddInput): Promise<void> {
  const kyma = await kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', a.ref.name, a.ref.namespace);
  const community = isCommunityName(a.module);
  if (kyma && !community && !a.direct) return await addToKyma(kube, a);
  await addDirectly(kube, a, kyma, community);
}

/** The template a direct install installs: the community module's, else the catalog's for the version or channel asked. */
async function directTemplate(
  kube: KubeClient,
  a: AddInput,
  kyma: Kyma | undefined,
  community: boolean,
): Promise<Template> {
  if (community && (a.channel || a.version))
    throw new Refused(
      `${a.module} is a community module: its template is one version; pull another with \`klm module pull --version\``,
    );
  return community
    ? await communityTemplate(kube, a.module)
    : await catalogTemplate(
        kube,
        a.ref.namespace,
        a.module,
        { ...(a.version ? { version: a.version } : {}), ...(a.channel ? { channel: a.channel } : {}) },
        kyma?.spec.channel ?? 'regular',
      );
}

/** Refuses a direct install of a module the Kyma has; says what a direct install means, and asks for a community module. */
async function acceptDirect(a: AddInput, module: string, kyma: Kyma | undefined, community: boolean): Promise<void> {
  if (kyma?.spec.modules?.some((m) => m.name === module)) {
    throw new Refused(
      `module ${module} is managed by Kyma ${a.ref.namespace}/${a.ref.name}: a direct install ` +
        `would fight the lifecycle manager. Remove it from the Kyma first (\`klm module delete ` +
        `${module}\`), or change how the Kyma has it`,
    );
  }
  if (community)
    a.progress(`warning: ${module} is a community module: the Kyma team neither supports it nor answers for it`);
  else if (kyma)
    a.progress(
      `warning: installing ${module} directly beside Kyma ${a.ref.namespace}/${a.ref.name}: the ` +
        `lifecycle manager will not upgrade, repair or support it; \`klm module add ${module}\` ` +
        `without --direct adds it to the Kyma instead`,
    );
  if (
    community &&
    a.approve &&
    !(await a.approve(`install the community module ${module}, which comes with no support?`))
  )
    throw new Refused('not confirmed: nothing installed (--auto-approve skips the question)');
}

/** Installs the module directly (klm applies its objects): a community module, a cluster without the Kyma, or --direct. */
async function addDirectly(kube: KubeClient, a: AddInput, kyma: Kyma | undefined, community: boolean): Promise<void> {
  const template = await directTemplate(kube, a, kyma, community);
  const module = template.spec.moduleName!;
  await acceptDirect(a, module, kyma, community);
  const target = await installTargetOf(kube, a.ref, kyma);
  const before = await readRecord(target, a.directNamespace, module);
  a.say(
    await directInstall({
      kube,
      target,
      template,
      community,
      namespace: a.directNamespace,
      policy: a.crPath ? 'Ignore' : (a.policy ?? before?.customResourcePolicy ?? a.newPolicy ?? 'CreateAndDelete'),
      ...(a.crPath ? { crObjects: await crObjects(a.crPath, a.directNamespace) } : {}),
      sources: a.sources(),
      crdTimeoutMs: a.crdTimeoutMs,
      progress: a.progress,
    }),
  );
  if (a.wait) {
    await waitDirect(target, a.directNamespace, module, a.timeoutMs, a.progress);
    a.say(`module ${module} is Ready`);
  }
}

/** Refuses to give the Kyma a module klm installed directly in its cluster. */
async function refuseDirect(target: KubeClient, directNamespace: string, module: string): Promise<void> {
  if (await readRecord(target, directNamespace, module)) {
    throw new Refused(
      `module ${module} is installed directly in namespace ${directNamespace}: the lifecycle ` +
        `manager would take it over unasked. Delete the direct install first (\`klm module delete ` +
        `${module}\`)`,
    );
  }
}

async function addToKyma(kube: KubeClient, a: AddInput): Promise<void> {
  const target = await targetOf(kube, a.ref);
  await refuseDirect(target, a.directNamespace, a.module);
  const objects = a.crPath ? await crObjects(a.crPath, a.directNamespace) : undefined;
  const policy = objects ? 'Ignore' : a.policy;
  a.say(
    await addModule(kube, a.ref, a.module, {
      ...(a.channel ? { channel: a.channel } : {}),
      ...(a.version ? { version: a.version } : {}),
      ...(policy ? { policy } : {}),
      ...(a.newPolicy ? { newPolicy: a.newPolicy } : {}),
    }),
  );
  if (!a.wait && !objects) return;
  // The module's CR from --cr-path needs its kind: it is applied once the module runs.
  const status = await waitForModule(
    kube,
    a.ref,
    a.module,
    // Ready on what was asked: a status from before the change (another channel) does not count.
    (s) =>
      (s?.state === 'Ready' || (!!objects && s?.state === 'Warning')) &&
      (!a.version || s.version === a.version) &&
      (!a.channel || s.channel === a.channel),
    a.timeoutMs,
    a.progress,
  );
  if (objects) {
    for (const o of objects) await target.apply(o);
    a.say(`applied ${objects.length} objects of ${a.crPath}`);
  }
  a.say(`module ${a.module} is ${status?.state ?? 'Ready'}`);
}

export interface ManageInput {
  module: string;
  ref: KymaRef;
  policy: CustomResourcePolicy;
  directNamespace: string;
}

/**
 * The version of the module that runs in the Kyma's cluster without the Kyma, as the Kyma CLI
 * finds it: a template of the module whose spec.manager is there running that template's version
 * (its app.kubernetes.io/version label, else its manager container's tag). A template without
 * spec.manager names nothing to find, as for the Kyma CLI.
 */
async function runningVersion(
  target: KubeClient,
  objects: CatalogObjects,
  module: string,
): Promise<string | undefined> {
  for (const t of objects.templates) {
    const m = t.spec.manager;
    if (t.spec.moduleName !== module || !m || !t.spec.version) continue;
    const live = await target
      .get<Manager>(apiVersionOf(m), m.kind, m.name, m.namespace ?? 'kyma-system')
      .catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    if (live && runningVersionOf(live) === t.spec.version) return t.spec.version;
  }
  return undefined;
}

/** Takes over a module the Kyma lacks, as the Kyma CLI's manage does: only one that runs, at the version the Kyma's channel carries. */
async function takeOver(kube: KubeClient, m: ManageInput, kyma: Kyma): Promise<string> {
  const where = `Kyma ${m.ref.namespace}/${m.ref.name}`;
  const objects = await catalogObjects(kube, m.ref.namespace);
  const version = await runningVersion(await targetOf(kube, m.ref), objects, m.module);
  const add = `klm module add ${m.module}${m.policy === 'CreateAndDelete' ? ' --default-config-cr' : ''}`;
  if (!version)
    throw new Refused(
      `module ${m.module} is not in ${where}, and no manager of it runs in its cluster to take over ` +
        `(as with the Kyma CLI, manage takes over only a module that runs); \`${add}\` adds it`,
    );
  const r = await resolutionOf(kyma, { name: m.module, customResourcePolicy: m.policy }, objects);
  if (r.module?.version !== version) {
    const channels = (objects.metas.find((x) => x.spec.moduleName === m.module)?.spec.channels ?? [])
      .filter((c) => c.version === version)
      .map((c) => c.channel);
    const carried = r.module ? `carries ${r.module.version}` : `cannot be installed (${r.failure?.message})`;
    throw new Refused(
      `module ${m.module} runs version ${version}, but channel ${kyma.spec.channel} of ${where} ${carried}: ` +
        (channels.length
          ? `\`${add} -c ${channels[0]}\` takes it over on channel ${channels.join(' or ')}`
          : `no channel carries ${version}`),
    );
  }
  await addModule(kube, m.ref, m.module, { policy: m.policy });
  return `module ${m.module} ${version}, running in the cluster, is now managed by ${where} (CR policy ${m.policy})`;
}

/**
 * klm module manage, as the Kyma CLI's: the module managed again with the CR policy asked; one
 * the Kyma lacks is taken over when it runs (see takeOver), else refused; one klm installed
 * directly is refused, as add refuses it.
 */
export async function manage(kube: KubeClient, m: ManageInput): Promise<string> {
  const kyma = await readKyma(kube, m.ref);
  if (kyma.spec.modules?.some((x) => x.name === m.module))
    return await setManaged(kube, m.ref, m.module, true, m.policy);
  await refuseDirect(await targetOf(kube, m.ref), m.directNamespace, m.module);
  return await takeOver(kube, m, kyma);
}
