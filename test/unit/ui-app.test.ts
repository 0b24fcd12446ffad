// The web page's logic that needs no browser (src/cli/ui/app/): its addresses, what it writes in
// its cells, what the catalog's button does, and the fleet's filter by state.
import { describe, expect, it } from 'vitest';
import { addChoice, addRequest } from '../../src/cli/ui/app/catalog-choice';
import { shownKymas, stateCounts } from '../../src/cli/ui/app/fleet-filter';
import {
  blockerText,
  channelOption,
  eventText,
  kindOf,
  originBadge,
  rolloutVersion,
  stateClass,
  steerQuestion,
  versionsText,
  wavesText,
} from '../../src/cli/ui/app/labels';
import type { CatalogEntry, FleetKyma } from '../../src/cli/ui/app/types';
import { callUrl, eventsUrl, fleetEventsUrl, kymaOf, namespaceOf, pageQuery, tokenOf } from '../../src/cli/ui/app/urls';

describe('the page’s addresses', () => {
  it('takes the token from the fragment and the Kyma from the query', () => {
    expect(tokenOf('#token=abc')).toBe('abc');
    expect(tokenOf('')).toBe('');
    expect(kymaOf('?kyma=kcp-system%2Fkyma-1')).toBe('kcp-system/kyma-1');
    expect(kymaOf('')).toBe('kyma-system/default');
    expect(pageQuery('kcp-system/kyma-1')).toBe('?kyma=kcp-system%2Fkyma-1');
    expect(namespaceOf('kcp-system/kyma-1')).toBe('kcp-system');
  });

  it('names the Kyma in every call, after the query the call has', () => {
    expect(callUrl('/api/modules', 'a/b')).toBe('/api/modules?kyma=a%2Fb');
    expect(callUrl('/api/why?module=x y', 'a/b')).toBe('/api/why?module=x y&kyma=a%2Fb');
  });

  it('puts the token into the event streams’ query (an EventSource sends no header)', () => {
    expect(eventsUrl('a/b', 't&1')).toBe('/api/events?kyma=a%2Fb&token=t%261');
    expect(fleetEventsUrl('kcp system', 't')).toBe('/api/fleet-events?namespace=kcp%20system&token=t');
  });
});

describe('what the page writes', () => {
  it('classes states by name, an absent one as none', () => {
    expect(stateClass('Ready')).toBe('state state-Ready');
    expect(stateClass(undefined)).toBe('state state-');
  });

  it('tells how a module came', () => {
    expect(kindOf({ managed: true })).toBe('managed');
    expect(kindOf({ managed: false })).toBe('unmanaged');
    expect(kindOf({ managed: false, direct: { community: false } })).toBe('direct');
    expect(kindOf({ managed: false, direct: { community: true } })).toBe('community');
  });

  it('names blockers, with their namespace when they have one', () => {
    expect(blockerText({ kind: 'Echo', namespace: 'ns', name: 'e' })).toBe('Echo ns/e');
    expect(blockerText({ kind: 'ClusterEcho', name: 'e' })).toBe('ClusterEcho e');
  });

  it('says why’s versions and events', () => {
    expect(versionsText({ installedVersion: '1.0.0', desiredVersion: '1.1.0', channel: 'fast' })).toBe(
      'Installed: 1.0.0; wanted: 1.1.0 (channel fast)',
    );
    expect(versionsText({})).toBe('Installed: -; wanted: -');
    expect(eventText({ lastTimestamp: '2026-01-01T00:00:00Z', reason: 'Ready', message: 'up' })).toBe(
      '2026-01-01T00:00:00Z Ready: up',
    );
    expect(eventText({ reason: 'Ready', message: 'up' })).toBe(' Ready: up');
  });

  const entry: CatalogEntry = {
    name: 'greeter',
    versions: ['1.0.0', '1.1.0'],
    channels: { regular: '1.0.0', fast: '1.1.0' },
    channelProblems: { fast: { reason: 'TemplateNotFound', message: 'no template for fast' } },
    beta: false,
    internal: false,
    origin: 'kyma',
  };

  it('shows each channel’s version, and why the Kyma cannot install it', () => {
    expect(channelOption(entry, 'regular')).toEqual({ text: 'regular (1.0.0)' });
    expect(channelOption(entry, 'fast')).toEqual({
      text: 'fast (1.1.0: TemplateNotFound)',
      title: 'no template for fast',
    });
  });

  it('badges a managed module and a community one by its origin', () => {
    expect(originBadge(entry)).toEqual({ class: 'badge', text: 'managed' });
    expect(originBadge({ origin: 'mods/echo-1.0.0' })).toEqual({
      class: 'badge community',
      text: 'community mods/echo-1.0.0',
    });
  });

  it('shows a rollout’s version, waves and steering question', () => {
    const p = {
      version: '1.1.0',
      from: '1.0.0',
      phase: 'Soaking',
      message: '',
      waves: [
        { done: 1, size: 1 },
        { done: 0, size: 3 },
      ],
    };
    expect(rolloutVersion(p)).toBe('1.1.0 (from 1.0.0)');
    expect(rolloutVersion({ ...p, version: '', from: undefined })).toBe('-');
    expect(rolloutVersion(undefined)).toBe('-');
    expect(wavesText(p)).toBe('1/1  0/3');
    expect(wavesText(undefined)).toBe('');
    expect(steerQuestion('pause', { module: 'greeter', channel: 'regular' })).toBe(
      'Pause the rollout of greeter on regular?',
    );
  });
});

describe('the catalog’s button', () => {
  const managed = { name: 'greeter', origin: 'kyma' };
  const community = { name: 'echo', origin: 'mods/echo-1.0.0' };

  it('adds a managed module to the Kyma, unless asked to install it directly', () => {
    const add = addChoice(managed, true, false);
    expect(add).toEqual({ label: 'Add to Kyma', module: 'greeter', direct: false });
    expect(addRequest(add, 'fast')).toEqual({ module: 'greeter', channel: 'fast' });
    const beside = addChoice(managed, true, true);
    expect(beside).toEqual({ label: 'Install directly', confirm: 'direct', module: 'greeter', direct: true });
    expect(addRequest(beside, '')).toEqual({ module: 'greeter', direct: true });
  });

  it('installs a managed module directly, unasked, when there is no Kyma', () => {
    const add = addChoice(managed, false, false);
    expect(add).toEqual({ label: 'Install directly', module: 'greeter', direct: false });
    expect(addRequest(add, 'regular')).toEqual({ module: 'greeter', channel: 'regular' });
  });

  it('installs a community module by its origin after saying it has no support', () => {
    for (const [exists, advanced] of [
      [true, false],
      [false, false],
      [true, true],
    ] as const) {
      const add = addChoice(community, exists, advanced);
      expect(add).toEqual({
        label: 'Install (community)',
        confirm: 'community',
        module: 'mods/echo-1.0.0',
        direct: false,
      });
      expect(addRequest(add, '')).toEqual({ module: 'mods/echo-1.0.0' });
    }
  });
});

describe('the fleet’s filter by state', () => {
  const kyma = (name: string, state: string): FleetKyma => ({ name, state, channel: 'regular', modules: 1, errors: 0 });
  const kymas = [kyma('a', 'Ready'), kyma('b', 'Error'), kyma('c', 'Ready')];

  it('lists the states by name with their counts', () => {
    expect(stateCounts({ Ready: 2, Error: 1, Processing: 3 })).toEqual([
      ['Error', 1],
      ['Processing', 3],
      ['Ready', 2],
    ]);
  });

  it('shows the Kymas of the state chosen, all when none is', () => {
    expect(shownKymas(kymas, '').map((k) => k.name)).toEqual(['a', 'b', 'c']);
    expect(shownKymas(kymas, 'Ready').map((k) => k.name)).toEqual(['a', 'c']);
    expect(shownKymas(kymas, 'Warning')).toEqual([]);
  });
});
