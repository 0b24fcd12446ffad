// The runtime Kyma's spec, without I/O: which modules a runtime wants (its users edit them
// there), how a change of the control-plane Kyma reaches it, and the status its users read.
import type { KymaModule, KymaSpec, KymaStatusInput } from '../api/kyma';
import type { SpecModule } from '../contract/kyma';
import type { RuntimeSpec } from '../contract/runtime';

/** A Kyma's .spec.modules with defaults filled in; a module listed twice counts once (the first). */
export function specModules(modules: readonly KymaModule[] = []): SpecModule[] {
  const seen = new Set<string>();
  return modules.flatMap((m) => {
    if (seen.has(m.name)) return [];
    seen.add(m.name);
    return [
      {
        name: m.name,
        ...(m.channel ? { channel: m.channel } : {}),
        ...(m.version ? { version: m.version } : {}),
        customResourcePolicy: m.customResourcePolicy ?? 'CreateAndDelete',
        managed: m.managed ?? true,
      },
    ];
  });
}

export function runtimeSpecOf(spec: Partial<KymaSpec> | undefined): RuntimeSpec {
  return { channel: spec?.channel ?? '', modules: specModules(spec?.modules) };
}

/** A module entry as it is written into a Kyma: defaults left out, as users write them. */
export function kymaModuleOf(m: SpecModule): KymaModule {
  return {
    name: m.name,
    ...(m.channel ? { channel: m.channel } : {}),
    ...(m.version ? { version: m.version } : {}),
    ...(m.customResourcePolicy !== 'CreateAndDelete' ? { customResourcePolicy: m.customResourcePolicy } : {}),
    ...(m.managed ? {} : { managed: false }),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The runtime Kyma's spec after a change of the control-plane Kyma (`before` → `now`): an
 * operator who adds, changes or removes a module (or the channel) in the control plane changes
 * it in the runtime; whatever the control plane did not change stays as the runtime's users
 * left it (their entries kept as written, fields this product does not know included).
 */
export function mergeControlPlaneChange(runtime: Partial<KymaSpec>, before: RuntimeSpec, now: RuntimeSpec): KymaSpec {
  const was = new Map(before.modules.map((m) => [m.name, m]));
  const is = new Map(now.modules.map((m) => [m.name, m]));
  const changed = (name: string) => !same(was.get(name), is.get(name));
  const modules: KymaModule[] = (runtime.modules ?? []).flatMap((m) => {
    if (!changed(m.name)) return [m];
    const wanted = is.get(m.name);
    return wanted ? [kymaModuleOf(wanted)] : [];
  });
  const listed = new Set(modules.map((m) => m.name));
  for (const m of now.modules) if (!listed.has(m.name) && changed(m.name)) modules.push(kymaModuleOf(m));
  return {
    ...runtime,
    channel: before.channel !== now.channel ? now.channel : (runtime.channel ?? now.channel),
    modules,
  };
}

/** Whether two specs ask for the same (the form of the entries aside). */
export function sameSpec(a: Partial<KymaSpec>, b: Partial<KymaSpec>): boolean {
  return same(runtimeSpecOf(a), runtimeSpecOf(b)) && same(a.modules ?? [], b.modules ?? []);
}

/** The control plane's status as the runtime's users read it: templates named where the runtime holds its copies. */
export function runtimeStatus(status: KymaStatusInput, catalogNamespace: string): KymaStatusInput {
  return {
    ...status,
    modules: (status.modules ?? []).map((m) =>
      m.template?.metadata
        ? { ...m, template: { ...m.template, metadata: { ...m.template.metadata, namespace: catalogNamespace } } }
        : m,
    ),
  };
}
