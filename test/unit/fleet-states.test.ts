// The fleet's states as the bridge exports them from its informers.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { fleetStates, shootOf } from '../../src/starter/fleet-states';

interface Meta {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  namespace?: string;
}

const obj = (kind: string, name: string, meta: Meta, rest: object = {}): KubeObject => ({
  apiVersion: 'operator.kyma-project.io/v1beta2',
  kind,
  metadata: {
    name,
    namespace: meta.namespace ?? 'kcp',
    ...(meta.labels ? { labels: meta.labels } : {}),
    ...(meta.annotations ? { annotations: meta.annotations } : {}),
  },
  ...rest,
});
const kyma = (name: string, meta: Meta, status?: object) => obj('Kyma', name, meta, status ? { status } : {});
const manifest = (name: string, labels: Record<string, string>, state?: string) =>
  obj('Manifest', name, { labels }, state ? { status: { state } } : {});
const releaseMeta = (name: string, spec: object, namespace = 'kcp') =>
  obj('ModuleReleaseMeta', name, { namespace }, { spec });

const KYMA_NAME = 'operator.kyma-project.io/kyma-name';
const MODULE_NAME = 'operator.kyma-project.io/module-name';
const MANDATORY = 'operator.kyma-project.io/mandatory-module';

describe('fleet states', () => {
  it("takes each Kyma's state and its modules' from its status, with upstream's shoot (skr-domain) and instance_id (kyma-project.io/instance-id)", () => {
    const kymas = [
      kyma(
        'k1',
        { labels: { 'kyma-project.io/instance-id': 'i1' }, annotations: { 'skr-domain': 'c-4a2b.kyma.example.com' } },
        {
          state: 'Warning',
          modules: [
            { name: 'greeter', state: 'Ready' },
            { name: 'counter', state: 'Unmanaged' },
          ],
        },
      ),
      kyma('k2', {}, { state: 'Error', modules: [{ name: 'greeter', state: 'Error' }] }),
    ];
    expect(fleetStates(kymas, [], [])).toEqual({
      kymas: [
        { namespace: 'kcp', name: 'k1', state: 'Warning', shoot: 'c-4a2b', instanceId: 'i1' },
        { namespace: 'kcp', name: 'k2', state: 'Error' },
      ],
      modules: [
        { namespace: 'kcp', kyma: 'k1', module: 'greeter', state: 'Ready', shoot: 'c-4a2b', instanceId: 'i1' },
        { namespace: 'kcp', kyma: 'k1', module: 'counter', state: 'Unmanaged', shoot: 'c-4a2b', instanceId: 'i1' },
        { namespace: 'kcp', kyma: 'k2', module: 'greeter', state: 'Error' },
      ],
      mandatoryModules: [],
      mandatoryModuleCounts: [{ namespace: 'kcp', count: 0 }],
    });
  });

  it("takes upstream's shoot as the first DNS label of a domain of more than two", () => {
    expect(shootOf({ 'skr-domain': 'c-1.kyma.example.com' })).toBe('c-1');
    expect(shootOf({ 'skr-domain': 'example.com' })).toBeUndefined();
    expect(shootOf({ 'skr-domain': '' })).toBeUndefined();
    expect(shootOf({ 'kyma-project.io/shoot-name': 'c-1' })).toBeUndefined();
    expect(shootOf(undefined)).toBeUndefined();
  });

  it('takes mandatory modules from their Manifests, and counts mandatory ModuleReleaseMetas per namespace (being deleted too)', () => {
    const manifests = [
      manifest('k1-warden', { [KYMA_NAME]: 'k1', [MODULE_NAME]: 'warden', [MANDATORY]: 'true' }, 'Processing'),
      manifest('k1-greeter', { [KYMA_NAME]: 'k1', [MODULE_NAME]: 'greeter' }, 'Ready'),
    ];
    const metas = [
      releaseMeta('warden', { mandatory: { version: '1.0.0' } }),
      {
        ...releaseMeta('gone', { mandatory: { version: '1.0.0' } }),
        metadata: { name: 'gone', namespace: 'kcp', deletionTimestamp: '2026-01-01T00:00:00Z' },
      },
      releaseMeta('greeter', { channels: [{ channel: 'regular', version: '1.0.0' }] }),
      releaseMeta('other', { channels: [] }, 'other'),
    ];
    expect(fleetStates([kyma('k1', {}, { state: 'Ready' })], manifests, metas)).toMatchObject({
      mandatoryModules: [{ namespace: 'kcp', kyma: 'k1', module: 'warden', state: 'Processing' }],
      mandatoryModuleCounts: [
        { namespace: 'kcp', count: 2 },
        { namespace: 'other', count: 0 },
      ],
    });
  });

  it('leaves out what has no state yet, and Manifests without their labels', () => {
    const manifests = [
      manifest('x', { [MANDATORY]: 'true' }, 'Ready'),
      manifest('k-m', { [KYMA_NAME]: 'k', [MODULE_NAME]: 'm', [MANDATORY]: 'true' }),
    ];
    expect(
      fleetStates(
        [kyma('new', {}), kyma('fresh', {}, { state: 'Processing', modules: [{ name: 'm', state: '' }] })],
        manifests,
        [],
      ),
    ).toEqual({
      kymas: [{ namespace: 'kcp', name: 'fresh', state: 'Processing' }],
      modules: [],
      mandatoryModules: [],
      mandatoryModuleCounts: [{ namespace: 'kcp', count: 0 }],
    });
  });
});
