// The bridge's routing alone: which workflows an event of a Kyma, ModuleTemplate,
// ModuleReleaseMeta, Manifest, kubeconfig Secret or target-cluster object concerns, and which
// signal with which payload each gets, under which shards; and the Temporal call each routed
// signal becomes. Without Temporal or Kubernetes.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { describe, expect, it, vi } from 'vitest';
import { OLD_CLUSTERS_CLEARED_ANNOTATION, RESOURCE_KIND_ANNOTATION, STATE_PATHS_ANNOTATION } from '../../src/api/names';
import { KYMA_FINALIZER, LABELS, type KubeObject } from '../../src/api/shared';
import { shardOf } from '../../src/decisions/shards';
import { kubeconfigKey } from '../../src/k8s/target-cluster';
import { DEFAULT_SETTINGS } from '../../src/contract/settings';
import { kymaChanged } from '../../src/contract/signals';
import {
  inShard,
  newestVersion,
  promotion,
  routeCatalog,
  routeHealth,
  routeKyma,
  routeManifest,
  routePromotions,
  routeRuntimeKyma,
  routeSecret,
  routeTargetObject,
  routeTemplates,
  routeWorkflowEnded,
  shardTakeover,
  signalKey,
  type CatalogView,
  type Scope,
  type Signal,
} from '../../src/starter/routing';
import { kymaStart, send } from '../../src/starter/workflow-starts';

const NS = 'kcp-system';
const ALL: Scope = { held: new Set() };

/** Kyma names of shard 0 and shard 1 of 2. */
const names = Array.from({ length: 40 }, (_, i) => `k${i}`);
const [MINE, OTHER] = [0, 1].map((s) => names.filter((n) => shardOf(NS, n, 2) === s)) as [string[], string[]];
const SHARD0: Scope = { shards: 2, held: new Set([0]) };
const SHARD1: Scope = { shards: 2, held: new Set([1]) };

function kyma(name: string, meta: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'Kyma',
    metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1, resourceVersion: '10', ...meta },
  };
}

function manifest(
  kymaName: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): KubeObject {
  return {
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'Manifest',
    metadata: {
      name: `${kymaName}-greeter`,
      namespace: NS,
      resourceVersion: '30',
      labels: { [LABELS.kymaName]: kymaName, [LABELS.moduleName]: 'greeter', ...labels },
      annotations,
    },
  };
}

function secret(kymaName: string, config = 'a2ViZWNvbmZpZw=='): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `kubeconfig-${kymaName}`, namespace: NS, labels: { [LABELS.kymaName]: kymaName } },
    data: { config },
  };
}

describe('signalKey', () => {
  it('collapses per workflow and signal, kept apart per kind, ended run and runtime poke', () => {
    const kyma = { namespace: NS, name: 'a' };
    const keys = (
      [
        { signal: 'kymaChanged', kyma, start: true, args: [] },
        { signal: 'kymaChanged', kyma, start: false, args: [], runtime: true },
        { signal: 'kymaChanged', kyma, start: false, args: [{ Secret: '7' }] },
        {
          signal: 'workflowEnded',
          kyma,
          ended: { workflowId: 'w', runId: 'r1', status: 'Terminated', at: '2026-11-26T13:00:00Z', reason: '' },
        },
        { signal: 'templatesChanged', kyma, of: 'ModuleReleaseMeta', args: [] },
        { signal: 'catalogChanged', kyma },
        { signal: 'modulesChanged', kyma, changes: [] },
        {
          signal: 'promoted',
          channel: { namespace: NS, module: 'greeter', channel: 'fast' },
          promotion: { version: '1.0.0' },
        },
      ] as Signal[]
    ).map(signalKey);
    expect(keys).toEqual([
      `kyma/${NS}/a#kymaChanged`,
      `kyma/${NS}/a#kymaChanged/runtime`,
      `kyma/${NS}/a#kymaChanged/secret`,
      `kyma/${NS}/a#workflowEnded/r1`,
      `kyma/${NS}/a#templatesChanged/ModuleReleaseMeta`,
      `kyma/${NS}/a#catalogChanged`,
      `kyma/${NS}/a#modulesChanged`,
      `rollout/${NS}/greeter/fast#promoted`,
    ]);
  });
});

describe('routeKyma', () => {
  it('starts or pokes the workflow of a new Kyma, with its version; a status write alone is no news', () => {
    const first = routeKyma('ADDED', kyma('a'), ALL, undefined);
    expect(first.signal).toEqual({
      signal: 'kymaChanged',
      kyma: { namespace: NS, name: 'a' },
      start: true,
      // No status yet: its workflow most likely never ran.
      fresh: { channel: '', modules: [] },
      args: [{ Kyma: '10' }],
    });
    const withSpec = { ...kyma('a'), spec: { channel: 'fast', modules: [{ name: 'greeter' }, { name: 'keda' }] } };
    expect(routeKyma('ADDED', withSpec as KubeObject, ALL, undefined).signal).toMatchObject({
      fresh: { channel: 'fast', modules: ['greeter', 'keda'] },
    });
    const withStatus = { ...kyma('a'), status: { state: 'Ready' } } as KubeObject;
    expect(routeKyma('ADDED', withStatus, ALL, undefined).signal).toEqual({
      signal: 'kymaChanged',
      kyma: { namespace: NS, name: 'a' },
      start: true,
      args: [{ Kyma: '10' }],
    });
    expect(routeKyma('MODIFIED', kyma('a', { resourceVersion: '11' }), ALL, first.seen)).toEqual({ seen: first.seen });
    const labelled = routeKyma('MODIFIED', kyma('a', { labels: { x: 'y' } }), ALL, first.seen);
    expect(labelled.signal).toMatchObject({ start: true });
    expect(labelled.seen).not.toBe(first.seen);
    // A relist's ADDED is told again.
    expect(routeKyma('ADDED', kyma('a'), ALL, first.seen).signal).toBeDefined();
  });

  it("takes its workflow's own finalizer for no news (the workflow wrote it); another's finalizer is", () => {
    const first = routeKyma('ADDED', kyma('a'), ALL, undefined);
    const ours = routeKyma('MODIFIED', kyma('a', { finalizers: [KYMA_FINALIZER] }), ALL, first.seen);
    expect(ours.signal).toBeUndefined();
    const theirs = routeKyma('MODIFIED', kyma('a', { finalizers: [KYMA_FINALIZER, 'example.io/x'] }), ALL, ours.seen);
    expect(theirs.signal).toMatchObject({ signal: 'kymaChanged', start: true });
    // Its deletion, finalizer and all, is news.
    const deleting = routeKyma(
      'MODIFIED',
      kyma('a', { finalizers: [KYMA_FINALIZER], deletionTimestamp: '2026-11-28T00:00:00Z' }),
      ALL,
      ours.seen,
    );
    expect(deleting.signal).toMatchObject({ signal: 'kymaChanged' });
  });

  it('tells a person clearing what switches of its Secret left in other clusters; other annotations are no news', () => {
    const first = routeKyma('ADDED', kyma('a'), ALL, undefined);
    const other = routeKyma('MODIFIED', kyma('a', { annotations: { note: 'x' } }), ALL, first.seen);
    expect(other).toEqual({ seen: first.seen });
    const cleared = routeKyma(
      'MODIFIED',
      kyma('a', { annotations: { [OLD_CLUSTERS_CLEARED_ANNOTATION]: '1' } }),
      ALL,
      first.seen,
    );
    expect(cleared.signal).toMatchObject({ signal: 'kymaChanged', start: true });
  });

  it('pokes, never starts, the workflow of a deleted Kyma, and forgets it', () => {
    expect(routeKyma('DELETED', kyma('a'), ALL, 'x')).toEqual({
      seen: undefined,
      signal: { signal: 'kymaChanged', kyma: { namespace: NS, name: 'a' }, start: false, args: [] },
    });
  });

  it('merges the versions a shard takeover adds; a Kyma of another shard is not signalled', () => {
    const also = { ModuleTemplate: '5', ModuleReleaseMeta: '6' };
    expect(routeKyma('ADDED', kyma(MINE[0]!), SHARD0, undefined, also).signal).toMatchObject({
      args: [{ Kyma: '10', ModuleTemplate: '5', ModuleReleaseMeta: '6' }],
    });
    expect(routeKyma('ADDED', kyma(MINE[0]!, { resourceVersion: '' }), SHARD0, undefined, {}).signal).toMatchObject({
      args: [{}],
    });
    expect(routeKyma('ADDED', kyma(OTHER[0]!), SHARD0, 'kept')).toEqual({ seen: 'kept' });
    expect(routeKyma('DELETED', kyma(OTHER[0]!), SHARD0, 'kept')).toEqual({ seen: undefined });
  });
});

describe('routeWorkflowEnded', () => {
  const ended = {
    workflowId: 'kyma/kcp-system/a',
    runId: 'r',
    status: 'Failed',
    at: '2026-11-26T13:00:00Z',
    reason: 'boom',
  } as const;
  it('tells the Kyma of an ended workflow while leading and while the Kyma is there', () => {
    expect(routeWorkflowEnded({ namespace: NS, name: 'a' }, ended, ALL, true)).toEqual({
      signal: 'workflowEnded',
      kyma: { namespace: NS, name: 'a' },
      ended,
    });
    expect(routeWorkflowEnded({ namespace: NS, name: 'a' }, ended, ALL, false)).toBeUndefined();
    expect(routeWorkflowEnded({ namespace: NS, name: 'a' }, ended, SHARD1, true)).toBeUndefined();
  });
});

describe('routeTemplates and promotions', () => {
  const meta = (resourceVersion: string): KubeObject => ({
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'ModuleReleaseMeta',
    metadata: { name: 'greeter', namespace: NS, resourceVersion },
  });

  it('signals the concerned Kymas of its shards with the event version, release metas with the newest template too', () => {
    const concerned = [MINE[0]!, OTHER[0]!, MINE[1]!];
    const t = routeTemplates(
      NS,
      concerned,
      'ModuleTemplate',
      { ...meta('7'), kind: 'ModuleTemplate' },
      {
        scope: SHARD0,
        templatesSeen: '7',
        kymaCount: 10,
      },
    );
    expect(t.signals).toEqual(
      [MINE[0]!, MINE[1]!].map((name) => ({
        signal: 'templatesChanged',
        kyma: { namespace: NS, name },
        of: 'ModuleTemplate',
        args: [{ ModuleTemplate: '7' }],
      })),
    );
    expect(t.skipped).toBe(7);
    const m = routeTemplates(NS, concerned, 'ModuleReleaseMeta', meta('9'), {
      scope: SHARD1,
      templatesSeen: '7',
      kymaCount: 10,
    });
    expect(m.signals.map((s) => s.signal === 'templatesChanged' && [s.kyma.name, s.args])).toEqual([
      [OTHER[0]!, [{ ModuleReleaseMeta: '9', ModuleTemplate: '7' }]],
    ]);
    // The spared Kymas are counted by the bridge that leads only.
    expect(m.skipped).toBe(0);
    expect(
      routeTemplates(NS, ['a'], 'ModuleReleaseMeta', meta(''), { scope: ALL, templatesSeen: '7', kymaCount: 1 })
        .signals,
    ).toEqual([{ signal: 'templatesChanged', kyma: { namespace: NS, name: 'a' }, of: 'ModuleReleaseMeta', args: [] }]);
  });

  it("tells each promoted channel's rollout the version, with the versions its reads must reflect", () => {
    expect(routePromotions(meta('9'), [{ channel: 'fast', version: '1.1.0' }], '7')).toEqual([
      {
        signal: 'promoted',
        channel: { namespace: NS, module: 'greeter', channel: 'fast' },
        promotion: { version: '1.1.0', seen: { ModuleReleaseMeta: '9', ModuleTemplate: '7' } },
      },
    ]);
    expect(promotion('1.0.0', meta('9'), '')).toEqual({ version: '1.0.0', seen: { ModuleReleaseMeta: '9' } });
    expect(promotion('1.0.0', meta(''), '7')).toEqual({ version: '1.0.0' });
  });

  it('keeps the newest version seen', () => {
    expect(newestVersion('', '5')).toBe('5');
    expect(newestVersion('5', '12')).toBe('12');
    expect(newestVersion('12', '5')).toBe('12');
  });
});

describe('routeCatalog', () => {
  const template = (labels: Record<string, string> = {}): KubeObject => ({
    apiVersion: 'operator.kyma-project.io/v1beta2',
    kind: 'ModuleTemplate',
    metadata: { name: 'greeter-1.0.0', namespace: NS, labels },
  });
  const beta = { [LABELS.beta]: 'true' };
  /** a and b own their runtimes (b labelled beta); c shares a's cluster; d has no watches yet; e is of another namespace. */
  function view(visibility?: { beta: boolean; internal: boolean }): CatalogView {
    const owners: Record<string, string> = { [`${NS}/a`]: `${NS}/a`, [`${NS}/b`]: `${NS}/b`, [`${NS}/c`]: `${NS}/a` };
    return {
      secrets: [
        secret('a'),
        secret('b'),
        secret('c'),
        secret('d'),
        { ...secret('e'), metadata: { ...secret('e').metadata, namespace: 'x' } },
      ],
      kyma: (ns, name) => kyma(name, name === 'b' ? { labels: beta } : {}),
      runtimeOwner: (who) => owners[who],
      visibility: () => visibility,
    };
  }

  it('tells a release meta to every Kyma that owns its runtime', () => {
    expect(routeCatalog(NS, view())).toEqual({ kymas: [`${NS}/a`, `${NS}/b`] });
  });

  it('tells a beta template to the beta Kymas only, and to all when it was visible before; remembers or forgets its labels', () => {
    expect(routeCatalog(NS, view(), template(beta))).toEqual({
      kymas: [`${NS}/b`],
      visibility: { key: `${NS}/greeter-1.0.0`, now: { beta: true, internal: false } },
    });
    expect(routeCatalog(NS, view({ beta: false, internal: false }), template(beta)).kymas).toEqual([
      `${NS}/a`,
      `${NS}/b`,
    ]);
    expect(routeCatalog(NS, view({ beta: true, internal: false }), template(beta), true)).toEqual({
      kymas: [`${NS}/b`],
      visibility: { key: `${NS}/greeter-1.0.0`, now: undefined },
    });
  });
});

describe('routeManifest', () => {
  const none = new Map<string, boolean>();
  const id = (k: string) => `kyma/${NS}/${k}/module/greeter`;
  const ref = (k: string) => ({ kyma: { namespace: NS, name: k }, module: 'greeter' });

  it('watches the CR kind of its module in the target cluster, with the status paths its check reads', () => {
    const m = manifest(
      'a',
      {},
      { [RESOURCE_KIND_ANNOTATION]: 'example.io/v1/Greeter', [STATE_PATHS_ANNOTATION]: 'status.health,' },
    );
    expect(routeManifest('ADDED', m, ALL, none)).toEqual({
      module: ref('a'),
      key: id('a'),
      checkMandatory: false,
      paused: undefined,
      watch: { on: true, resource: { apiVersion: 'example.io/v1', kind: 'Greeter' }, statePaths: ['status.health'] },
    });
    expect(routeManifest('DELETED', manifest('a'), ALL, none)?.watch).toEqual({ on: false, statePaths: [] });
    expect(routeManifest('ADDED', { ...m, metadata: { ...m.metadata, labels: {} } }, ALL, none)).toBeUndefined();
  });

  it('tells its module a pause or resume, with the Manifest version; a Manifest as before is no news', () => {
    const paused = manifest('a', { [LABELS.skipReconciliation]: 'true' });
    expect(routeManifest('MODIFIED', paused, ALL, none)).toMatchObject({
      paused: true,
      note: { module: ref('a'), news: { seen: { Manifest: '30' } } },
    });
    expect(routeManifest('MODIFIED', paused, ALL, new Map([[id('a'), true]]))?.note).toBeUndefined();
    expect(routeManifest('MODIFIED', manifest('a'), ALL, new Map([[id('a'), true]]))).toMatchObject({
      paused: false,
      note: { module: ref('a'), news: { seen: { Manifest: '30' } } },
    });
    const noVersion = { ...paused, metadata: { ...paused.metadata, resourceVersion: '' } };
    expect(routeManifest('MODIFIED', noVersion, ALL, none)?.note).toEqual({ module: ref('a'), news: 'everything' });
    expect(routeManifest('DELETED', paused, ALL, new Map([[id('a'), true]]))?.paused).toBeUndefined();
  });

  it('leaves the Manifests of other shards and namespaces alone; the leader checks a deleted mandatory one', () => {
    const mandatory = manifest(OTHER[0]!, { [LABELS.mandatoryModule]: 'true' });
    const other = routeManifest('DELETED', mandatory, SHARD0, new Map([[id(OTHER[0]!), true]]));
    expect(other).toMatchObject({ checkMandatory: true, paused: undefined });
    expect(other?.watch).toBeUndefined();
    expect(
      routeManifest('DELETED', manifest(MINE[0]!, { [LABELS.mandatoryModule]: 'true' }), SHARD1, none),
    ).toMatchObject({ checkMandatory: false });
    const unserved = routeManifest(
      'ADDED',
      manifest('a'),
      { held: new Set(), namespaces: ['x'] },
      new Map([[id('a'), true]]),
    );
    expect(unserved).toMatchObject({ paused: true });
    expect(unserved?.watch).toBeUndefined();
    expect(unserved?.note).toBeUndefined();
  });
});

describe('routeSecret', () => {
  it("moves a Kyma's watches when its kubeconfig changes or goes, and watches its runtime Kyma where it points", () => {
    const s = secret('a');
    const poke = (args: unknown[]) => ({
      signal: 'kymaChanged',
      kyma: { namespace: NS, name: 'a' },
      start: false,
      args,
    });
    expect(routeSecret('ADDED', s, ALL, undefined)).toEqual({ kyma: 'a', move: false, watchRuntime: true });
    // Its Kyma's workflow is told, with the Secret's version its next load must read (it may name another cluster now).
    const changed = { ...s, metadata: { ...s.metadata, resourceVersion: '42' } };
    expect(routeSecret('MODIFIED', changed, ALL, 'another-key')).toEqual({
      kyma: 'a',
      move: true,
      watchRuntime: true,
      signal: poke([{ Secret: '42' }]),
    });
    expect(routeSecret('MODIFIED', changed, ALL, kubeconfigKey(s))).toEqual({
      kyma: 'a',
      move: false,
      watchRuntime: true,
    });
    expect(routeSecret('DELETED', s, ALL, 'another-key')).toEqual({
      kyma: 'a',
      move: true,
      watchRuntime: false,
      signal: poke([]),
    });
    expect(routeSecret('DELETED', s, ALL, undefined)).toEqual({ kyma: 'a', move: false, watchRuntime: false });
    expect(routeSecret('ADDED', secret(OTHER[0]!), SHARD0, undefined)).toBeUndefined();
    expect(routeSecret('ADDED', { ...s, metadata: { ...s.metadata, labels: {} } }, ALL, undefined)).toBeUndefined();
  });
});

describe('routeRuntimeKyma and routeHealth', () => {
  const runtime = (who: string) => ({
    signal: 'kymaChanged',
    kyma: { namespace: NS, name: who },
    start: false,
    args: [],
    runtime: true,
  });
  const on = [`${NS}/a`, `${NS}/b`];

  it("tells its users' edit to the owner only; a new owner, a takeover or a deletion to every Kyma on the cluster", () => {
    const watched = { listed: false };
    expect(routeRuntimeKyma(`${NS}/a`, `${NS}/a`, on, ALL, watched)).toEqual([runtime('a')]);
    expect(routeRuntimeKyma(`${NS}/b`, `${NS}/a`, on, ALL, watched)).toEqual([
      runtime('a'),
      runtime('b'),
      { signal: 'catalogChanged', kyma: { namespace: NS, name: 'b' } },
    ]);
    expect(routeRuntimeKyma(undefined, `${NS}/a`, on, ALL, watched)).toEqual([runtime('a'), runtime('b')]);
    expect(routeRuntimeKyma(`${NS}/${OTHER[0]!}`, `${NS}/${OTHER[0]!}`, on, SHARD0, watched)).toEqual([]);
  });

  it("takes a runtime Kyma made while watched for its owner's own work: the other Kymas on the cluster are told, the owner not", () => {
    // Its owner's workflow made it, and syncs its catalog in full after: no catalog news for it.
    expect(routeRuntimeKyma(`${NS}/a`, undefined, on, ALL, { listed: false })).toEqual([runtime('b')]);
  });

  it('tells the owner of a runtime Kyma first found by a list (a bridge starting, a watch listing again) that its catalog may have changed meanwhile', () => {
    // Every Kyma is told by its own ADDED event; template events from before the list went to nobody.
    expect(routeRuntimeKyma(`${NS}/a`, undefined, on, ALL, { listed: true })).toEqual([
      runtime('b'),
      { signal: 'catalogChanged', kyma: { namespace: NS, name: 'a' } },
    ]);
  });

  it('makes every module on a cluster whose health changed read everything again, and its Kymas their runtime', () => {
    const [m1, m2] = ['m1', 'm2'].map((module) => ({ kyma: { namespace: NS, name: 'a' }, module }));
    expect(routeHealth(new Set([m1!, m2!]), [`${NS}/a`])).toEqual({
      notes: [
        { module: m1, news: 'everything' },
        { module: m2, news: 'everything' },
      ],
      signals: [runtime('a')],
    });
  });
});

describe('routeTargetObject', () => {
  it('tells the owning module, else the subscribers of its kind; an object of another shard nobody', () => {
    const owner = { namespace: NS, kyma: MINE[0]!, module: 'greeter' };
    const [x, y] = ['x', 'y'].map((module) => ({ kyma: { namespace: NS, name: MINE[0]! }, module }));
    expect(routeTargetObject(owner, [x!], SHARD0)).toEqual([
      { kyma: { namespace: NS, name: MINE[0]! }, module: 'greeter' },
    ]);
    expect(routeTargetObject(undefined, new Set([x!, y!]), SHARD0)).toEqual([x, y]);
    expect(routeTargetObject({ ...owner, kyma: OTHER[0]! }, [x!], SHARD0)).toEqual([]);
  });
});

describe('shardTakeover', () => {
  it('tells again the Kymas, Secrets and Manifests of the shard taken, with the newest versions seen', () => {
    const got = shardTakeover(0, 2, {
      kymas: [kyma(MINE[0]!), kyma(OTHER[0]!)],
      secrets: [secret(MINE[0]!), secret(OTHER[0]!)],
      manifests: [
        manifest(MINE[0]!),
        manifest(OTHER[0]!),
        { ...manifest(MINE[1]!), metadata: { name: 'x', namespace: NS, labels: { [LABELS.kymaName]: MINE[1]! } } },
      ],
      templatesSeen: '5',
      releaseMetasSeen: '',
    });
    expect(got.also).toEqual({ ModuleTemplate: '5' });
    expect(got.kymas.map((k) => k.metadata.name)).toEqual([MINE[0]]);
    expect(got.secrets.map((s) => s.metadata.labels?.[LABELS.kymaName])).toEqual([MINE[0]]);
    expect(got.manifests.map((m) => m.module)).toEqual([
      { kyma: { namespace: NS, name: MINE[0]! }, module: 'greeter' },
    ]);
    expect(inShard(NS, undefined, 0, 2)).toBe(false);
  });
});

describe('send', () => {
  const FRESH = { channel: 'fast', modules: ['greeter', 'keda'] };
  function fake() {
    const signal = vi.fn(() => Promise.resolve());
    const client = {
      workflow: {
        signalWithStart: vi.fn(() => Promise.resolve()),
        start: vi.fn(() => Promise.resolve()),
        getHandle: vi.fn(() => ({ signal })),
      },
    };
    return { client, signal, temporal: client as unknown as Client };
  }
  const o = { taskQueue: 'q', settings: DEFAULT_SETTINGS };
  const kyma = { namespace: NS, name: 'a' };

  it('starts the Kyma workflow with its id, input and search attributes where the signal may start it', async () => {
    const f = fake();
    await send(f.temporal, o, { signal: 'kymaChanged', kyma, start: true, args: [{ Kyma: '1' }] });
    expect(f.client.workflow.signalWithStart).toHaveBeenCalledWith('kymaWorkflow', {
      ...kymaStart(kyma, o),
      // The run's first read reflects what the bridge saw: the start's input carries it too.
      args: [{ kyma, seen: { Kyma: '1' } }],
      signal: kymaChanged,
      signalArgs: [{ Kyma: '1' }],
    });
    expect(kymaStart(kyma, o)).toMatchObject({ workflowId: `kyma/${NS}/a`, taskQueue: 'q' });
    expect(kymaStart(kyma, o).typedSearchAttributes.map((a) => a.value)).toEqual(['a', NS]);
  });

  it('starts the workflow of a Kyma without status with no signal, the news in its input; signals it if it runs already', async () => {
    const f = fake();
    await send(f.temporal, o, { signal: 'kymaChanged', kyma, start: true, fresh: FRESH, args: [{ Kyma: '1' }] });
    expect(f.client.workflow.start).toHaveBeenCalledWith('kymaWorkflow', {
      ...kymaStart(kyma, o, { Kyma: '1' }, FRESH),
      workflowIdConflictPolicy: 'FAIL',
    });
    // Found as Processing, with its channel and modules, from its start.
    expect(kymaStart(kyma, o, { Kyma: '1' }, FRESH).typedSearchAttributes.map((a) => [a.key.name, a.value])).toEqual([
      ['KymaName', 'a'],
      ['KymaNamespace', NS],
      ['KymaState', 'Processing'],
      ['Channel', 'fast'],
      ['Modules', ['greeter', 'keda']],
    ]);
    expect(f.client.workflow.signalWithStart).not.toHaveBeenCalled();
    expect(f.signal).not.toHaveBeenCalled();
    f.client.workflow.start.mockImplementationOnce(() =>
      Promise.reject(new WorkflowExecutionAlreadyStartedError('running', `kyma/${NS}/a`, 'kymaWorkflow')),
    );
    await send(f.temporal, o, { signal: 'kymaChanged', kyma, start: true, fresh: FRESH, args: [{ Kyma: '2' }] });
    expect(f.signal.mock.calls.map((c: unknown[]) => [(c[0] as { name: string }).name, ...c.slice(1)])).toEqual([
      ['kymaChanged', { Kyma: '2' }],
    ]);
    // Any other failure is the send's.
    f.client.workflow.start.mockImplementationOnce(() => Promise.reject(new Error('unavailable')));
    await expect(
      send(f.temporal, o, { signal: 'kymaChanged', kyma, start: true, fresh: FRESH, args: [] }),
    ).rejects.toThrow('unavailable');
  });

  it('signals the running workflow otherwise, with the payload routed', async () => {
    const f = fake();
    await send(f.temporal, o, { signal: 'kymaChanged', kyma, start: false, args: [] });
    await send(f.temporal, o, {
      signal: 'templatesChanged',
      kyma,
      of: 'ModuleTemplate',
      args: [{ ModuleTemplate: '3' }],
    });
    await send(f.temporal, o, { signal: 'modulesChanged', kyma, changes: [{ module: 'greeter' }] });
    expect(f.client.workflow.getHandle).toHaveBeenCalledWith(`kyma/${NS}/a`);
    expect(f.signal.mock.calls.map((c: unknown[]) => [(c[0] as { name: string }).name, ...c.slice(1)])).toEqual([
      ['kymaChanged'],
      ['templatesChanged', { ModuleTemplate: '3' }],
      ['modulesChanged', [{ module: 'greeter' }]],
    ]);
    expect(f.client.workflow.signalWithStart).not.toHaveBeenCalled();
  });

  it('starts the rollout of a promoted channel', async () => {
    const f = fake();
    const channel = { namespace: NS, module: 'greeter', channel: 'fast' };
    await send(f.temporal, o, { signal: 'promoted', channel, promotion: { version: '1.1.0' } });
    expect(f.client.workflow.signalWithStart).toHaveBeenCalledWith(
      'rolloutWorkflow',
      expect.objectContaining({
        workflowId: `rollout/${NS}/greeter/fast`,
        taskQueue: 'q',
        signalArgs: [{ version: '1.1.0' }],
      }),
    );
  });
});
