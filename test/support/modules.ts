// Modules of a test's own: the greeter sample under a fresh name, kind and API group, so that
// removing or upgrading it touches nothing another test (or Kyma) on the shared cluster uses.
import {
  moduleReleaseMeta,
  moduleTemplate,
  pushModuleVersion,
  type ModuleVersion,
  type PushTarget,
} from '../../src/publish/module';
import { loadSamples } from '../../src/samples/modules';
import type { Klm } from './klm';
import { stackInfo } from './stack';

export interface TestModule {
  name: string;
  apiVersion: string;
  kind: string;
  component: string;
  /** Publishes a version; `extra` YAML documents are appended to greeter 1.0.0's manifest, which `edit` may change. */
  publish(version: string, extra?: string, edit?: (manifest: string) => string, more?: PublishOptions): Promise<void>;
  /** Creates or replaces the module's ModuleReleaseMeta. */
  channels(channels: Record<string, string>): Promise<void>;
}

/** How a version is published, beyond its manifest: the template's form and extras, where it is pushed. */
export interface PublishOptions {
  descriptor?: ModuleVersion['descriptor'];
  customStateCheck?: ModuleVersion['customStateCheck'];
  /** Default: the shared stack's registry, no subpath. */
  to?: PushTarget;
}

function letters(n: number): string {
  return Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
}

export async function testModule(klm: Klm, opts: { scope?: 'Namespaced' | 'Cluster' } = {}): Promise<TestModule> {
  const name = `mod${letters(8)}`;
  const kind = name[0]!.toUpperCase() + name.slice(1);
  const group = `${name}.example.io`;
  const { versions } = await loadSamples();
  const greeter = versions.find((v) => v.name === 'greeter' && v.version === '1.0.0')!;
  let manifest = greeter.manifest
    .replaceAll('greeter.example.io', group)
    .replaceAll('Greeter', kind)
    .replaceAll('greeter', name);
  if (opts.scope === 'Cluster') manifest = manifest.replace('scope: Namespaced', 'scope: Cluster');
  const component = `kyma-project.io/module/${name}`;
  klm.manager.watch(`${group}/v1alpha1`, kind);
  const registry = stackInfo().registryHost;
  return {
    name,
    kind,
    component,
    apiVersion: `${group}/v1alpha1`,
    async publish(version, extra, edit = (x: string) => x, more = {}) {
      const m: ModuleVersion = {
        ...greeter,
        ...(more.descriptor ? { descriptor: more.descriptor } : {}),
        ...(more.customStateCheck ? { customStateCheck: more.customStateCheck } : {}),
        name,
        component,
        version,
        manifest: edit(extra ? `${manifest}\n---\n${extra}\n` : manifest),
        defaultCR: { apiVersion: `${group}/v1alpha1`, kind, metadata: { name: 'default' }, spec: {} },
      };
      const descriptor = await pushModuleVersion(more.to ?? registry, m);
      await klm.kube.apply(moduleTemplate(m, klm.namespace, descriptor));
    },
    async channels(channels) {
      await klm.kube.apply(moduleReleaseMeta(name, component, klm.namespace, channels));
    },
  };
}
