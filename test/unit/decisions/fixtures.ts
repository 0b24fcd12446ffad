// Small builders for the decision tests: a module, its install result, settings.
import type { FetchedModule, RenderedRef } from '../../../src/contract/artifacts';
import type { KymaSnapshot, SpecModule } from '../../../src/contract/kyma';
import type { ResolvedModule } from '../../../src/contract/module';
import { DEFAULT_SETTINGS, type ReconcileSettings } from '../../../src/contract/settings';
import type { ModuleStateOptions } from '../../../src/decisions/module-state';

export const SETTINGS: ReconcileSettings = {
  ...DEFAULT_SETTINGS,
  driftIntervalMs: 600_000,
  installRetryMs: 30_000,
  managerAvailableTimeoutMs: 300_000,
};
export const KYMA = { namespace: 'kcp', name: 'k1' };

export function mod(version = '1.0.0', over: Partial<ResolvedModule> = {}): ResolvedModule {
  return {
    name: 'greeter',
    channel: 'regular',
    version,
    customResourcePolicy: 'CreateAndDelete',
    template: { name: `greeter-${version}`, namespace: 'kcp', generation: 1 },
    ...over,
  };
}

export function installResult(version: string): { fetched: FetchedModule; rendered: RenderedRef } {
  const layer = {
    registry: 'r:5000',
    repository: 'component-descriptors/greeter',
    digest: `sha256:layer-${version}`,
    size: 1,
    format: 'tar' as const,
  };
  return {
    fetched: {
      layer,
      defaultCr: {
        apiVersion: 'greeter.example.io/v1alpha1',
        kind: 'Greeter',
        name: 'default',
        namespace: 'k1-system',
      },
    },
    rendered: {
      layer,
      params: { kymaNamespace: 'kcp', kymaName: 'k1', module: 'greeter', defaultNamespace: 'k1-system' },
      digest: `sha256:rendered-${version}`,
      objects: 5,
      crds: ['greeters.greeter.example.io'],
      manager: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'greeter-manager', namespace: 'k1-system' },
    },
  };
}

export function moduleInput(over: Partial<ModuleStateOptions> = {}): ModuleStateOptions {
  return { kyma: KYMA, uid: 'uid-1', module: mod(), settings: SETTINGS, ...over };
}

/** A Kyma as loaded (uid-1, channel regular, finalized, local), with these spec modules. */
export function snapshot(modules: SpecModule[], over: Partial<KymaSnapshot> = {}): KymaSnapshot {
  return {
    uid: 'uid-1',
    generation: 1,
    channel: 'regular',
    modules,
    deleting: false,
    finalized: true,
    paused: false,
    remote: false,
    visibility: { beta: false, internal: false },
    ...over,
  };
}
