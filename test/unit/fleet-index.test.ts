// The fleet index alone: which Kymas a ModuleReleaseMeta or ModuleTemplate event concerns,
// given the Kymas' module uses, without Temporal or Kubernetes.
import { describe, expect, it } from 'vitest';
import type { Kyma } from '../../src/api/kyma';
import type { ModuleReleaseMeta } from '../../src/api/modulereleasemeta';
import { FleetIndex, moduleUses } from '../../src/starter/fleet-index';

const NS = 'kcp-system';

function meta(name: string, spec: Partial<ModuleReleaseMeta['spec']>): ModuleReleaseMeta {
  return {
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'ModuleReleaseMeta',
    metadata: { name, namespace: NS },
    spec: { moduleName: name, ocmComponentName: `kyma-project.io/module/${name}`, ...spec },
  };
}

const greeter = (channels: Record<string, string>, extra: Partial<ModuleReleaseMeta['spec']> = {}) =>
  meta('greeter', { channels: Object.entries(channels).map(([channel, version]) => ({ channel, version })), ...extra });

/** A: greeter on regular (the Kyma's); B: greeter pinned at 1.0.0; C: greeter on fast, counter on regular; D: counter only. */
function fleet(): FleetIndex {
  const index = new FleetIndex();
  const kyma = (name: string, spec: Kyma['spec']) => index.setKyma(NS, name, spec);
  kyma('a', { channel: 'regular', modules: [{ name: 'greeter' }] });
  kyma('b', { channel: 'regular', modules: [{ name: 'greeter', version: '1.0.0' }] });
  kyma('c', { channel: 'regular', modules: [{ name: 'greeter', channel: 'fast' }, { name: 'counter' }] });
  kyma('d', { channel: 'regular', modules: [{ name: 'counter' }] });
  index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.0.0', fast: '1.1.0' }));
  index.releaseMetaChanged(NS, 'counter', meta('counter', { channels: [{ channel: 'regular', version: '1.0.0' }] }));
  return index;
}

describe('moduleUses', () => {
  it("takes the module's channel, else the Kyma's, else regular; a version makes a pin", () => {
    expect(
      moduleUses({
        channel: 'fast',
        modules: [
          { name: 'x', channel: 'experimental' },
          { name: 'y' },
          { name: 'z', version: '2.0.0', channel: 'fast' },
        ],
      }),
    ).toEqual([
      { module: 'x', channel: 'experimental' },
      { module: 'y', channel: 'fast' },
      { module: 'z', version: '2.0.0' },
    ]);
    expect(moduleUses({ channel: '', modules: [{ name: 'x' }] })).toEqual([{ module: 'x', channel: 'regular' }]);
  });
});

describe('FleetIndex: Kymas', () => {
  it('lists the Kymas on a module and channel, pins apart', () => {
    const index = fleet();
    expect(index.kymasOn(NS, 'greeter', 'regular')).toEqual(['a']);
    expect(index.kymasOn(NS, 'greeter', 'fast')).toEqual(['c']);
    expect(index.kymasOn(NS, 'counter', 'regular')).toEqual(['c', 'd']);
    expect(index.kymasPinning(NS, 'greeter', '1.0.0')).toEqual(['b']);
    expect(index.channelsOf(NS, 'greeter')).toEqual(['fast', 'regular']);
    expect(index.kymasOn('elsewhere', 'greeter', 'regular')).toEqual([]);
    expect(index.kymaCount(NS)).toBe(4);
  });

  it('moves a Kyma when its channel or modules change, and forgets it when it is deleted', () => {
    const index = fleet();
    index.setKyma(NS, 'a', {
      channel: 'fast',
      modules: [{ name: 'greeter' }, { name: 'counter', channel: 'regular' }],
    });
    expect(index.kymasOn(NS, 'greeter', 'regular')).toEqual([]);
    expect(index.kymasOn(NS, 'greeter', 'fast')).toEqual(['a', 'c']);
    expect(index.kymasOn(NS, 'counter', 'regular')).toEqual(['a', 'c', 'd']);
    index.setKyma(NS, 'b', { channel: 'regular', modules: [{ name: 'greeter' }] });
    expect(index.kymasPinning(NS, 'greeter', '1.0.0')).toEqual([]);
    expect(index.kymasOn(NS, 'greeter', 'regular')).toEqual(['b']);
    index.deleteKyma(NS, 'c');
    index.deleteKyma(NS, 'nosuch');
    expect(index.kymasOn(NS, 'greeter', 'fast')).toEqual(['a']);
    expect(index.kymasOn(NS, 'counter', 'regular')).toEqual(['a', 'd']);
    expect(index.kymaCount(NS)).toBe(3);
  });
});

describe('FleetIndex: a ModuleReleaseMeta event', () => {
  const poke = (kymas: string[]) => ({ poke: kymas, promotions: [] });

  it('is a promotion of the channel whose version changed, for its rollout: no Kyma is poked', () => {
    const index = fleet();
    expect(index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.1.0', fast: '1.1.0' }))).toEqual({
      poke: [],
      promotions: [{ channel: 'regular', version: '1.1.0' }],
    });
    expect(index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.1.0', fast: '1.2.0' }))).toEqual({
      poke: [],
      promotions: [{ channel: 'fast', version: '1.2.0' }],
    });
  });

  it('concerns nobody when no channel in use changed version (a label, a new channel nobody uses)', () => {
    const index = fleet();
    expect(index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.0.0', fast: '1.1.0' }))).toEqual(poke([]));
    expect(
      index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.0.0', fast: '1.1.0' }, { beta: true })),
    ).toEqual(poke([]));
    expect(
      index.releaseMetaChanged(
        NS,
        'counter',
        meta('counter', {
          channels: [
            { channel: 'regular', version: '1.0.0' },
            { channel: 'fast', version: '2.0.0' },
          ],
        }),
      ),
    ).toEqual(poke([]));
  });

  it('pokes every Kyma on a channel without a version when the channels change (their message lists them), and those whose channel gains one', () => {
    const index = fleet();
    index.setKyma(NS, 'e', { channel: 'nightly', modules: [{ name: 'greeter' }] });
    expect(
      index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.0.0', fast: '1.1.0', experimental: '2.0.0' })),
    ).toEqual(poke(['e']));
    expect(
      index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.0.0', fast: '1.1.0', nightly: '2.0.0' })),
    ).toEqual(poke(['e']));
  });

  it('promotes every used channel, and the channel "mandatory", when the mandatory version changes', () => {
    const index = fleet();
    index.releaseMetaChanged(NS, 'greeter', meta('greeter', { mandatory: { version: '1.0.0' } }));
    expect(index.releaseMetaChanged(NS, 'greeter', meta('greeter', { mandatory: { version: '2.0.0' } }))).toEqual({
      poke: [],
      promotions: [
        { channel: 'fast', version: '2.0.0' },
        { channel: 'mandatory', version: '2.0.0' },
        { channel: 'regular', version: '2.0.0' },
      ],
    });
  });

  it('pokes every Kyma of the namespace, users or not, when a module becomes mandatory or stops being so (its deletion begun)', () => {
    const index = fleet();
    expect(index.releaseMetaChanged(NS, 'greeter', meta('greeter', { mandatory: { version: '1.0.0' } }))).toEqual({
      poke: ['a', 'b', 'c', 'd'],
      promotions: [
        { channel: 'fast', version: '1.0.0' },
        { channel: 'mandatory', version: '1.0.0' },
      ],
    });
    const deleting = meta('greeter', { mandatory: { version: '1.0.0' } });
    deleting.metadata.deletionTimestamp = '2026-11-22T00:00:00Z';
    expect(index.releaseMetaChanged(NS, 'greeter', deleting).poke).toEqual(['a', 'b', 'c', 'd']);
    // A mandatory module nobody lists: still every Kyma's.
    expect(index.releaseMetaChanged(NS, 'logging', meta('logging', { mandatory: { version: '3.0.0' } }))).toEqual({
      poke: ['a', 'b', 'c', 'd'],
      promotions: [{ channel: 'mandatory', version: '3.0.0' }],
    });
    expect(index.releaseMetaChanged(NS, 'logging', undefined)).toEqual({ poke: ['a', 'b', 'c', 'd'], promotions: [] });
  });

  it('pokes every user, pins included, when the ocmComponentName changes (and names the used channels for their rollouts)', () => {
    const index = fleet();
    const both = [
      { channel: 'fast', version: '1.1.0' },
      { channel: 'regular', version: '1.0.0' },
    ];
    expect(
      index.releaseMetaChanged(
        NS,
        'greeter',
        greeter({ regular: '1.0.0', fast: '1.1.0' }, { ocmComponentName: 'example.com/greeter' }),
      ),
    ).toEqual({ poke: ['a', 'b', 'c'], promotions: both });
    expect(
      index.releaseMetaChanged(
        NS,
        'greeter',
        greeter({ regular: '1.0.0', fast: '1.1.0' }, { ocmComponentName: undefined }),
      ),
    ).toEqual({ poke: ['a', 'b', 'c'], promotions: both });
  });

  it('pokes every user, pins included, when it is added or deleted; an added one names every used channel it carries', () => {
    const index = fleet();
    expect(index.releaseMetaChanged(NS, 'greeter', undefined)).toEqual(poke(['a', 'b', 'c']));
    expect(index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.0.0', fast: '1.1.0' }))).toEqual({
      poke: ['a', 'b', 'c'],
      promotions: [
        { channel: 'fast', version: '1.1.0' },
        { channel: 'regular', version: '1.0.0' },
      ],
    });
  });

  it('concerns nobody when no Kyma uses the module, yet is remembered for the next diff', () => {
    const index = fleet();
    expect(
      index.releaseMetaChanged(NS, 'other', meta('other', { channels: [{ channel: 'regular', version: '1.0.0' }] })),
    ).toEqual(poke([]));
    index.setKyma(NS, 'o', { channel: 'regular', modules: [{ name: 'other' }] });
    expect(
      index.releaseMetaChanged(NS, 'other', meta('other', { channels: [{ channel: 'regular', version: '1.0.0' }] })),
    ).toEqual(poke([]));
    expect(
      index.releaseMetaChanged(NS, 'other', meta('other', { channels: [{ channel: 'regular', version: '1.0.1' }] })),
    ).toEqual({ poke: [], promotions: [{ channel: 'regular', version: '1.0.1' }] });
  });

  it('keeps namespaces apart', () => {
    const index = fleet();
    index.setKyma('other-ns', 'x', { channel: 'regular', modules: [{ name: 'greeter' }] });
    index.releaseMetaChanged('other-ns', 'greeter', greeter({ regular: '1.0.0' }));
    expect(index.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.1.0', fast: '1.1.0' }))).toEqual({
      poke: [],
      promotions: [{ channel: 'regular', version: '1.1.0' }],
    });
  });
});

describe('FleetIndex: a ModuleTemplate event', () => {
  it('concerns the Kymas that pin its version and those whose channel maps to it', () => {
    const index = fleet();
    expect(index.templateChanged(NS, 'greeter-1.0.0')).toEqual(['a', 'b']);
    expect(index.templateChanged(NS, 'greeter-1.1.0')).toEqual(['c']);
    expect(index.templateChanged(NS, 'counter-1.0.0')).toEqual(['c', 'd']);
  });

  it('concerns nobody for a version no channel maps and nobody pins (published before its promotion)', () => {
    const index = fleet();
    expect(index.templateChanged(NS, 'greeter-2.0.0')).toEqual([]);
    expect(index.templateChanged(NS, 'unused-1.0.0')).toEqual([]);
    expect(index.templateChanged('other-ns', 'greeter-1.0.0')).toEqual([]);
  });

  it('follows the mandatory version', () => {
    const index = fleet();
    index.releaseMetaChanged(NS, 'greeter', meta('greeter', { mandatory: { version: '2.0.0' } }));
    // Every Kyma has a mandatory module, users or not.
    expect(index.templateChanged(NS, 'greeter-2.0.0')).toEqual(['a', 'b', 'c', 'd']);
    expect(index.templateChanged(NS, 'greeter-1.1.0')).toEqual([]);
  });

  it('concerns every channel user of a module without a ModuleReleaseMeta', () => {
    const index = fleet();
    index.releaseMetaChanged(NS, 'greeter', undefined);
    expect(index.templateChanged(NS, 'greeter-7.0.0')).toEqual(['a', 'c']);
    expect(index.templateChanged(NS, 'greeter-1.0.0')).toEqual(['a', 'b', 'c']);
  });

  it('tells modules apart whose names share a prefix, and versions with a pre-release', () => {
    const index = new FleetIndex();
    index.setKyma(NS, 'p', {
      channel: 'regular',
      modules: [{ name: 'foo' }, { name: 'foo-bar', version: '1.0.0-rc.1' }],
    });
    index.setKyma(NS, 'q', { channel: 'regular', modules: [{ name: 'foo-bar' }] });
    index.releaseMetaChanged(NS, 'foo', meta('foo', { channels: [{ channel: 'regular', version: '1.0.0' }] }));
    index.releaseMetaChanged(NS, 'foo-bar', meta('foo-bar', { channels: [{ channel: 'regular', version: '2.0.0' }] }));
    expect(index.templateChanged(NS, 'foo-bar-1.0.0-rc.1')).toEqual(['p']);
    expect(index.templateChanged(NS, 'foo-bar-2.0.0')).toEqual(['q']);
    expect(index.templateChanged(NS, 'foo-1.0.0')).toEqual(['p']);
  });
});

describe('FleetIndex.promotionsOf', () => {
  it('tells each used channel its version, and the mandatory version, as a first sight of the release meta would', () => {
    const index = fleet();
    expect(index.promotionsOf(NS, 'greeter').sort((x, y) => x.channel.localeCompare(y.channel))).toEqual([
      { channel: 'fast', version: '1.1.0' },
      { channel: 'regular', version: '1.0.0' },
    ]);
    expect(index.promotionsOf(NS, 'unknown')).toEqual([]);
    index.releaseMetaChanged(NS, 'mandatory', meta('mandatory', { mandatory: { version: '3.0.0' } }));
    expect(index.promotionsOf(NS, 'mandatory')).toEqual([{ channel: 'mandatory', version: '3.0.0' }]);
    const fresh = new FleetIndex();
    fresh.setKyma(NS, 'a', { channel: 'regular', modules: [{ name: 'greeter' }] });
    const first = fresh.releaseMetaChanged(NS, 'greeter', greeter({ regular: '1.0.0', fast: '1.1.0' }));
    expect(fresh.promotionsOf(NS, 'greeter')).toEqual(first.promotions);
  });
});
