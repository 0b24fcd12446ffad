// The bridge's pure parts: which target-object changes wake a module, which can wait for the
// module's next news, and how the Signaller collapses bursts into at most one call in flight
// plus one more per workflow.
import { WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import type { ModuleRef } from '../../src/contract/kyma';
import type { KubeClient } from '../../src/k8s/rest-client';
import { ModuleNews } from '../../src/starter/module-news';
import {
  crNewsCanWait,
  moduleProcessing,
  readinessFingerprint,
  withoutStatus,
  workloadNewsCanWait,
} from '../../src/starter/readiness-change';
import { TargetWatches } from '../../src/starter/target-watches';
import { NOTHING_SENT, signalOf, Signaller } from '../../src/starter/signaller';

function deployment(status: Record<string, unknown>, meta: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'm', namespace: 'n', generation: 1, ...meta },
    spec: { replicas: 1 },
    status,
  };
}
const available = {
  observedGeneration: 1,
  updatedReplicas: 1,
  availableReplicas: 1,
  conditions: [{ type: 'Available', status: 'True' }],
};

const cr = (status: Record<string, unknown>): KubeObject => ({
  apiVersion: 'g/v1',
  kind: 'Greeter',
  metadata: { name: 'default', generation: 1 },
  status,
});

describe('readinessFingerprint', () => {
  it('ignores status churn of a workload that does not change its availability', () => {
    expect(readinessFingerprint(deployment({ ...available, replicas: 1 }))).toBe(
      readinessFingerprint(deployment({ ...available, replicas: 1, readyReplicas: 1, observedGeneration: 1 })),
    );
  });

  it('changes when a workload becomes available, a spec changes, a deletion starts or finalizers change', () => {
    const base = readinessFingerprint(deployment({ observedGeneration: 1 }));
    expect(readinessFingerprint(deployment(available))).not.toBe(base);
    expect(readinessFingerprint(deployment({ observedGeneration: 1 }, { generation: 2 }))).not.toBe(base);
    expect(readinessFingerprint(deployment({ observedGeneration: 1 }, { deletionTimestamp: 'now' }))).not.toBe(base);
    expect(readinessFingerprint(deployment({ observedGeneration: 1 }, { finalizers: ['x'] }))).not.toBe(base);
  });

  it("follows a module CR's state and message, not counters of its status", () => {
    expect(readinessFingerprint(cr({ state: 'Ready', observedGeneration: 1 }))).toBe(
      readinessFingerprint(cr({ state: 'Ready', observedGeneration: 2 })),
    );
    expect(readinessFingerprint(cr({ state: 'Ready' }))).not.toBe(readinessFingerprint(cr({ state: 'Error' })));
    expect(readinessFingerprint(cr({ state: 'Error', message: 'a' }))).not.toBe(
      readinessFingerprint(cr({ state: 'Error', message: 'b' })),
    );
  });

  it('follows the fields a customStateCheck reads, and no other field of the status', () => {
    const paths = ['status.health', 'status.nested.phase'];
    expect(readinessFingerprint(cr({ health: 'green' }), paths)).not.toBe(
      readinessFingerprint(cr({ health: 'red' }), paths),
    );
    expect(readinessFingerprint(cr({ nested: { phase: 'a' } }), paths)).not.toBe(
      readinessFingerprint(cr({ nested: { phase: 'b' } }), paths),
    );
    // An operator's other status strings (a last operation, say) wake nobody.
    expect(readinessFingerprint(cr({ state: 'Ready', lastOperation: 'sync 1' }), paths)).toBe(
      readinessFingerprint(cr({ state: 'Ready', lastOperation: 'sync 2' }), paths),
    );
    expect(readinessFingerprint(cr({ health: 'green' }))).toBe(readinessFingerprint(cr({ health: 'red' })));
  });

  it('knows a fresh object without status', () => {
    expect(withoutStatus(deployment({}))).toBe(true);
    expect(withoutStatus({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } })).toBe(true);
    expect(withoutStatus(deployment(available))).toBe(false);
  });
});

describe("news that can wait for its module's next news", () => {
  const stalled = {
    observedGeneration: 1,
    conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
  };

  it("is a manager's rollout, under way or done, while its module's CR reports no state or Processing", () => {
    for (const cr of [null, 'Processing']) {
      expect(workloadNewsCanWait('MODIFIED', deployment(available), cr)).toBe(true);
      expect(workloadNewsCanWait('ADDED', deployment({ observedGeneration: 1 }), cr)).toBe(true);
    }
  });

  it('is not once the CR reports a state that the rollout decides (Ready) or that shows (Error, Warning)', () => {
    for (const cr of ['Ready', 'Error', 'Warning', 'Deleting'])
      expect(workloadNewsCanWait('MODIFIED', deployment(available), cr)).toBe(false);
  });

  it("is not a stalled rollout, a deleted manager, a CR's own news, or a module its CR does not decide by state", () => {
    expect(workloadNewsCanWait('MODIFIED', deployment(stalled), null)).toBe(false);
    expect(workloadNewsCanWait('DELETED', deployment(available), null)).toBe(false);
    const deleting = deployment(available, { deletionTimestamp: '2026-11-29T12:00:00Z' });
    expect(workloadNewsCanWait('MODIFIED', deleting, null)).toBe(false);
    expect(workloadNewsCanWait('MODIFIED', cr({ state: 'Processing' }), null)).toBe(false);
    // A module without a default CR (its workload alone decides), or one a customStateCheck reads.
    expect(workloadNewsCanWait('MODIFIED', deployment(available), undefined)).toBe(false);
  });

  it("is a CR's news of no state or Processing, unless it is deleted or being deleted", () => {
    for (const now of [null, 'Processing']) expect(crNewsCanWait('MODIFIED', cr({ state: now }), now)).toBe(true);
    for (const now of ['Ready', 'Error', 'Warning', 'Deleting', undefined])
      expect(crNewsCanWait('MODIFIED', cr({ state: now }), now)).toBe(false);
    expect(crNewsCanWait('DELETED', cr({ state: 'Processing' }), 'Processing')).toBe(false);
    const deleting = { ...cr({ state: 'Processing' }), metadata: { name: 'default', deletionTimestamp: 'now' } };
    expect(crNewsCanWait('MODIFIED', deleting, 'Processing')).toBe(false);
  });

  it('is only for a module its Manifest shows Processing, or without a state yet', () => {
    expect(moduleProcessing(undefined)).toBe(true);
    expect(moduleProcessing('Processing')).toBe(true);
    for (const state of ['Ready', 'Error', 'Warning', 'Deleting']) expect(moduleProcessing(state)).toBe(false);
  });

  describe("a target cluster's watches", () => {
    // Informers that never list: the test feeds the events.
    const client = { list: () => new Promise(() => {}) } as unknown as KubeClient;
    const owned = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, namespace: 'n' } });
    const key = 'kyma/n/k/module/greeter';
    const ref = { kyma: { namespace: 'n', name: 'k' }, module: 'greeter' };

    /** Watches that saw the module's Manifest: the module, and the CR kind it follows. */
    function watches(statePaths: string[] = []): TargetWatches {
      const t = new TargetWatches(client, 'kubeconfig', false, () => {});
      t.manifest(key, ref, true, undefined);
      t.subscribe('g/v1', 'Greeter', key, ref, true, statePaths);
      return t;
    }

    it("let a manager's rollout wait while the module's own CR reports no state, and not once it is Ready", () => {
      const t = watches();
      try {
        // Not seen yet: no state.
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(true);
        // The CR's own news of no state or Processing waits too; of Ready it does not.
        expect(t.canWait('ADDED', owned(cr({})), key)).toBe(true);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(true);
        expect(t.canWait('MODIFIED', owned(cr({ state: 'Processing' })), key)).toBe(true);
        expect(t.canWait('MODIFIED', owned(cr({ state: 'Processing', message: 'installing' })), key)).toBe(true);
        expect(t.canWait('MODIFIED', owned(cr({ state: 'Ready' })), key)).toBe(false);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(false);
        expect(t.canWait('DELETED', owned(cr({ state: 'Processing' })), key)).toBe(false);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(true);
      } finally {
        t.stop();
      }
    });

    it("let nothing wait once the module's Manifest shows another state than Processing (Ready, Error)", () => {
      const t = watches();
      try {
        t.canWait('MODIFIED', owned(cr({ state: 'Processing' })), key);
        t.manifest(key, ref, true, 'Processing');
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(true);
        expect(t.letsWait(key)).toBe(true);
        for (const state of ['Ready', 'Error']) {
          // Ready: the CR went Processing meanwhile (the bridge was away); Error: its manager's pods failed.
          t.manifest(key, ref, true, state);
          expect(t.letsWait(key)).toBe(false);
          expect(t.canWait('MODIFIED', deployment(available), key)).toBe(false);
          expect(t.canWait('ADDED', owned(cr({ state: 'Processing' })), key)).toBe(false);
        }
        // Gone: as a module whose Manifest is not seen (its first install).
        t.manifest(key, ref, false, 'Ready');
        expect(t.letsWait(key)).toBe(true);
      } finally {
        t.stop();
      }
    });

    it('remember what the CR reported before the Manifest came', () => {
      const t = new TargetWatches(client, 'kubeconfig', false, () => {});
      try {
        t.canWait('MODIFIED', owned(cr({ state: 'Ready' })), key);
        t.manifest(key, ref, true, undefined);
        t.subscribe('g/v1', 'Greeter', key, ref, true);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(false);
      } finally {
        t.stop();
      }
    });

    it("let a manager's rollout wait while the module's Manifest is not seen (its first install is under way)", () => {
      const t = new TargetWatches(client, 'kubeconfig', false, () => {});
      try {
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(true);
        expect(t.letsWait(key)).toBe(true);
        // Its Manifest seen: a module without a default CR is decided by its workload, which cannot wait.
        t.manifest(key, ref, true, undefined);
        expect(t.letsWait(key)).toBe(false);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(false);
      } finally {
        t.stop();
      }
    });

    it("let a manager's rollout wait until its CR kind is listed, and not after if no CR of the module's own was listed", async () => {
      // Informers that list nothing once, then watch for ever.
      const listing = {
        list: () => Promise.resolve({ items: [], resourceVersion: '1' }),
        clusterWidePath: () => new Promise(() => {}),
      } as unknown as KubeClient;
      const unheld: ModuleRef[][] = [];
      const t = new TargetWatches(listing, 'kubeconfig', false, () => {}, {
        onListed: (modules) => unheld.push(modules),
      });
      try {
        t.manifest(key, ref, true, undefined);
        t.subscribe('g/v1', 'Greeter', key, ref, true);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(true);
        // Listed without a CR of the module's: its news is told, and need wait no longer.
        await vi.waitFor(() => expect(unheld).toEqual([[ref]]));
        // A CR made before our install carries no owner annotation: the bridge never notes it.
        expect(t.letsWait(key)).toBe(false);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(false);
        t.canWait('ADDED', owned(cr({ state: 'Processing' })), key);
        expect(t.canWait('MODIFIED', deployment(available), key)).toBe(true);
      } finally {
        t.stop();
      }
    });

    it('let nothing wait for a module that follows no CR kind, or whose kind a customStateCheck reads', () => {
      const custom = watches(['status.health']);
      const other = watches();
      try {
        expect(custom.canWait('MODIFIED', owned(cr({ state: 'Processing' })), key)).toBe(false);
        expect(custom.canWait('MODIFIED', deployment(available), key)).toBe(false);
        expect(custom.letsWait(key)).toBe(false);
        const plain = 'kyma/n/k/module/plain';
        other.manifest(plain, { ...ref, module: 'plain' }, true, undefined);
        expect(other.canWait('MODIFIED', deployment(available), plain)).toBe(false);
        expect(other.letsWait(plain)).toBe(false);
        other.subscribe('g/v1', 'Greeter', key, ref, false);
        expect(other.canWait('MODIFIED', deployment(available), key)).toBe(false);
      } finally {
        custom.stop();
        other.stop();
      }
    });
  });

  describe('ModuleNews', () => {
    const kyma = { namespace: 'n', name: 'k' };

    it('tells news that cannot wait at once, and takes along what waited', () => {
      vi.useFakeTimers();
      const news = new ModuleNews(5_000);
      try {
        const told: number[] = [];
        news.due(kyma, true, () => told.push(1));
        vi.advanceTimersByTime(4_000);
        expect(told).toEqual([]);
        news.due(kyma, false, () => told.push(2));
        expect(told).toEqual([2]);
        // What waited went along: its timer no longer tells.
        vi.advanceTimersByTime(5_000);
        expect(told).toEqual([2]);
        // News that waits, taken by a signal already on its way, goes with it: its timer no longer tells.
        news.due(kyma, true, () => told.push(3));
        news.take(kyma);
        vi.advanceTimersByTime(5_000);
        expect(told).toEqual([2]);
      } finally {
        news.stop();
        vi.useRealTimers();
      }
    });

    it('tells news that waits once it has waited its while, counted from the first', () => {
      vi.useFakeTimers();
      const news = new ModuleNews(5_000);
      try {
        const told: number[] = [];
        news.due(kyma, true, () => told.push(1));
        vi.advanceTimersByTime(3_000);
        news.due(kyma, true, () => told.push(2));
        vi.advanceTimersByTime(1_999);
        expect(told).toEqual([]);
        vi.advanceTimersByTime(1);
        expect(told).toEqual([1]);
        // Released: told at once, and its timer no longer tells.
        news.due(kyma, true, () => told.push(4));
        news.release(kyma, () => told.push(5));
        news.release(kyma, () => told.push(6));
        vi.advanceTimersByTime(5_000);
        expect(told).toEqual([1, 5]);
        // Without a while to wait, nothing waits.
        const now = new ModuleNews(0);
        now.due(kyma, true, () => told.push(3));
        expect(told).toEqual([1, 5, 3]);
        // Stopped: what waited and what comes later is not told.
        news.due(kyma, true, () => told.push(7));
        news.stop();
        news.due(kyma, false, () => told.push(8));
        news.due(kyma, true, () => told.push(9));
        vi.advanceTimersByTime(10_000);
        expect(told).toEqual([1, 5, 3]);
      } finally {
        news.stop();
        vi.useRealTimers();
      }
    });
  });
});

describe('Signaller', () => {
  function deferred(): { promise: Promise<void>; resolve(): void; reject(e: unknown): void } {
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }

  it('keeps one call in flight per key and collapses a burst into one more call, the latest', async () => {
    const errors: unknown[] = [];
    const s = new Signaller((e) => errors.push(e));
    const first = deferred();
    const calls: string[] = [];
    s.submit('wf#sig', () => (calls.push('1'), first.promise));
    s.submit('wf#sig', () => (calls.push('2'), Promise.resolve()));
    s.submit('wf#sig', () => (calls.push('3'), Promise.resolve()));
    s.submit('other#sig', () => (calls.push('other'), Promise.resolve()));
    expect(calls).toEqual(['1', 'other']);
    first.resolve();
    await s.idle();
    expect(calls).toEqual(['1', 'other', '3']);
    expect({ sent: s.sent, failed: s.failed, errors }).toEqual({ sent: 3, failed: 0, errors: [] });
  });

  it('counts no signal for a call that found nothing to send, nor holds the next call for its window', async () => {
    vi.useFakeTimers();
    try {
      const s = new Signaller(() => undefined);
      const calls: string[] = [];
      const key = 'kyma/ns/a#modulesChanged';
      s.submit(key, () => (calls.push('empty'), new Promise((r) => setTimeout(() => r(NOTHING_SENT), 50))), 200);
      await vi.advanceTimersByTimeAsync(210);
      s.submit(key, () => (calls.push('news'), Promise.resolve()), 200);
      await vi.advanceTimersByTimeAsync(50);
      expect({ calls, sent: s.sent }).toEqual({ calls: ['empty', 'news'], sent: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('holds a first call for its window when asked, and sends what came meanwhile as one call, the latest', async () => {
    vi.useFakeTimers();
    try {
      const s = new Signaller(() => undefined);
      const calls: string[] = [];
      s.submit('kyma/ns/a#modulesChanged', () => (calls.push('1'), Promise.resolve()), 200);
      s.submit('kyma/ns/a#modulesChanged', () => (calls.push('2'), Promise.resolve()), 200);
      await vi.advanceTimersByTimeAsync(199);
      expect(calls).toEqual([]);
      s.submit('kyma/ns/a#modulesChanged', () => (calls.push('3'), Promise.resolve()), 200);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toEqual(['3']);
      await vi.advanceTimersByTimeAsync(100);
      expect({ calls, sent: s.sent }).toEqual({ calls: ['3'], sent: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends what came while a windowed call was in flight one window after that call, as one call, the latest', async () => {
    vi.useFakeTimers();
    try {
      const s = new Signaller(() => undefined);
      const calls: string[] = [];
      const key = 'kyma/ns/a#modulesChanged';
      const slow = () => (calls.push('1'), new Promise<void>((r) => setTimeout(r, 50)));
      s.submit(key, slow, 200);
      await vi.advanceTimersByTimeAsync(200);
      expect(calls).toEqual(['1']);
      s.submit(key, () => (calls.push('2'), Promise.resolve()), 200);
      await vi.advanceTimersByTimeAsync(100);
      s.submit(key, () => (calls.push('3'), Promise.resolve()), 200);
      await vi.advanceTimersByTimeAsync(99);
      expect(calls).toEqual(['1']);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toEqual(['1', '3']);
      s.submit(key, () => (calls.push('4'), Promise.resolve()), 200);
      await vi.advanceTimersByTimeAsync(199);
      expect(calls).toEqual(['1', '3']);
      await vi.advanceTimersByTimeAsync(1);
      expect({ calls, sent: s.sent }).toEqual({ calls: ['1', '3', '4'], sent: 3 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops a signal to a workflow that does not exist, and reports other failures', async () => {
    const errors: string[] = [];
    const s = new Signaller((_e, key) => errors.push(key));
    s.submit('gone#sig', () => Promise.reject(new WorkflowNotFoundError('no', 'gone', undefined)));
    s.submit('broken#sig', () => Promise.reject(new Error('unavailable')));
    await s.idle();
    expect(errors).toEqual(['broken#sig']);
    expect(s.failed).toBe(1);
  });

  it("collapses a template event and a release-meta event for one Kyma apart, so that neither kind's version is lost", async () => {
    const s = new Signaller(() => undefined);
    const first = deferred();
    const calls: string[] = [];
    const wf = 'kyma/ns/a';
    s.submit(`${wf}#templatesChanged/ModuleTemplate`, () => (calls.push('template 1'), first.promise));
    s.submit(`${wf}#templatesChanged/ModuleReleaseMeta`, () => (calls.push('meta 1'), first.promise));
    s.submit(`${wf}#templatesChanged/ModuleTemplate`, () => (calls.push('template 2'), Promise.resolve()));
    s.submit(`${wf}#templatesChanged/ModuleReleaseMeta`, () => (calls.push('meta 2'), Promise.resolve()));
    first.resolve();
    await s.idle();
    expect(calls.sort()).toEqual(['meta 1', 'meta 2', 'template 1', 'template 2']);
  });

  it('names the signal of a key without its qualifier, for the metrics', () => {
    expect(signalOf('kyma/ns/a#templatesChanged/ModuleTemplate')).toBe('templatesChanged');
    expect(signalOf('kyma/ns/a/module/greeter#resourceChanged/Manifest')).toBe('resourceChanged');
    expect(signalOf('kyma/ns/a#kymaChanged')).toBe('kymaChanged');
  });
});
