// Many modules at little cost: each one ConfigMap named after the module (no manager, no default
// CR), Ready once applied, published as modulectl publishes (a component in the registry, a
// ModuleTemplate with `descriptor: {}`, a ModuleReleaseMeta).
import { moduleReleaseMeta, moduleTemplate, pushModuleVersion } from '../../src/publish/module';
import type { Klm } from './klm';
import { stackInfo } from './stack';

/** Publishes `version` of small module `name` (its ConfigMap says the version) and points channel regular at it. */
export async function publishSmallModule(klm: Klm, name: string, version: string): Promise<void> {
  const m = {
    name,
    component: `kyma-project.io/module/${name}`,
    version,
    manifest: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  module: ${name}\n  version: ${version}\n`,
    descriptor: 'empty' as const,
    layer: 'yaml' as const,
  };
  await klm.kube.apply(moduleTemplate(m, klm.namespace, await pushModuleVersion(stackInfo().registryHost, m)));
  await klm.kube.apply(moduleReleaseMeta(name, m.component, klm.namespace, { regular: version }));
}

/** `count` small modules at 1.0.0, named `<prefix>-<aaa…>` (letters only: ModuleTemplate's spec.moduleName pattern). */
export async function publishSmallModules(klm: Klm, count: number, prefix: string): Promise<string[]> {
  const code = (i: number) => [2, 1, 0].map((p) => String.fromCharCode(97 + (Math.floor(i / 26 ** p) % 26))).join('');
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${code(i)}`);
  for (let i = 0; i < names.length; i += 20)
    await Promise.all(names.slice(i, i + 20).map((name) => publishSmallModule(klm, name, '1.0.0')));
  return names;
}
