import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { nextAttemptDelayMs, retryAfter } from '../../src/activities/failure';
import { MODULE_INSTALL_RETRY } from '../../src/contract/install-retry';
import type { InstallModuleInput } from '../../src/activities/install/install';
import {
  installBatchActivities,
  Limit,
  outcomeOfFailure,
  type InstallModulesResult,
  type InstallOutcome,
} from '../../src/activities/install/install-batch';
import { RUNTIME_STEP_RETRY, type CatalogSync, type SyncRuntimeCatalogInput } from '../../src/contract/runtime';
import type { InstallResult } from '../../src/contract/module';
import { activityFailureLog } from '../../src/workers/activity-failures';

const KYMA = { namespace: 'kcp-system', name: 'k1' };

function input(module: string): InstallModuleInput {
  return {
    kyma: KYMA,
    module: { name: module } as InstallModuleInput['module'],
    params: { kymaNamespace: KYMA.namespace, kymaName: KYMA.name, module, defaultNamespace: 'kyma-system' },
    crdTimeoutMs: 1000,
  };
}

const result = (module: string) => ({ fetched: { module }, rendered: { digest: module } }) as unknown as InstallResult;

/** Fails retryably (tried again 1 ms later) this many times, then installs. */
function flaky(failures: Record<string, number>) {
  const calls: string[] = [];
  return {
    calls,
    install: (i: InstallModuleInput): Promise<InstallResult> => {
      const m = i.module.name;
      calls.push(m);
      if ((failures[m] ?? 0) > 0) {
        failures[m]!--;
        return Promise.reject(retryAfter('RegistryUnavailable', `registry of ${m} unreachable`, 1));
      }
      return Promise.resolve(result(m));
    },
  };
}

/** An interceptor that records each attempt it sees: activity type, attempt, module, outcome. */
function recorder(seen: string[]): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(i, next) {
        const m = (i.args[0] as Partial<InstallModuleInput>).module?.name ?? 'catalog';
        const what = `${ctx.info.activityType} #${ctx.info.attempt} ${m}`;
        try {
          const r = await next(i);
          seen.push(`${what} ok`);
          return r;
        } catch (err) {
          seen.push(`${what} failed`);
          throw err;
        }
      },
    },
  });
}

const CATALOG: SyncRuntimeCatalogInput = {
  kyma: KYMA,
  uid: 'u1',
  visibility: { beta: false, internal: false },
  full: true,
  after: 0,
};

/** A catalog sync that fails retryably (tried again 1 ms later) this many times, then syncs. */
function flakyCatalog(failures: number) {
  const calls: SyncRuntimeCatalogInput[] = [];
  return {
    calls,
    sync: (i: SyncRuntimeCatalogInput): Promise<CatalogSync> => {
      calls.push(i);
      if (failures-- > 0) return Promise.reject(retryAfter('TargetClusterUnreachable', 'runtime unreachable', 1));
      return Promise.resolve({ applied: 4, deleted: 1, foreign: 0 });
    },
  };
}

function batchOf(
  install: (i: InstallModuleInput) => Promise<InstallResult>,
  observers: ActivityInterceptorsFactory[],
  syncRuntimeCatalog: (i: SyncRuntimeCatalogInput) => Promise<CatalogSync> = () => Promise.reject(new Error('no sync')),
) {
  const env = new MockActivityEnvironment({
    activityType: 'installModules',
    workflowExecution: { workflowId: `kyma/${KYMA.namespace}/${KYMA.name}`, runId: 'r' },
  });
  const batch = installBatchActivities({ installModule: install, syncRuntimeCatalog }, observers);
  return (modules: string[], catalog?: SyncRuntimeCatalogInput): Promise<InstallModulesResult> =>
    env.run((i) => batch.installModules(i), { installs: modules.map(input), ...(catalog ? { catalog } : {}) });
}

function run(install: (i: InstallModuleInput) => Promise<InstallResult>, observers: ActivityInterceptorsFactory[]) {
  const installModules = batchOf(install, observers);
  return async (modules: string[]): Promise<InstallOutcome[]> => {
    const done = await installModules(modules);
    expect(done.catalog).toBeUndefined();
    return done.installs;
  };
}

describe('a Kyma’s installs in one activity', () => {
  it('gives each module its own outcome, in order: a failing one is tried again on its own, as an installModule attempt of its own', async () => {
    const { install, calls } = flaky({ b: 2 });
    const seen: string[] = [];
    const outcomes = await run(install, [recorder(seen)])(['a', 'b', 'c']);
    expect(outcomes).toEqual([{ value: result('a') }, { value: result('b') }, { value: result('c') }]);
    expect(calls.filter((m) => m === 'a')).toHaveLength(1);
    expect(calls.filter((m) => m === 'b')).toHaveLength(3);
    expect(seen.filter((s) => s.endsWith(' b failed'))).toEqual([
      'installModule #1 b failed',
      'installModule #2 b failed',
    ]);
    expect(seen).toContain('installModule #3 b ok');
    expect(seen).toContain('installModule #1 a ok');
  });

  it('ends a module’s attempts after the fifth, with its typed reason; the others are installed', async () => {
    const { install, calls } = flaky({ b: 99 });
    const outcomes = await run(install, [])(['a', 'b']);
    expect(outcomes[0]).toEqual({ value: result('a') });
    expect(outcomes[1]).toEqual({
      failure: { reason: 'RegistryUnavailable', message: 'registry of b unreachable' },
    });
    expect(calls.filter((m) => m === 'b')).toHaveLength(MODULE_INSTALL_RETRY.maximumAttempts);
  });

  it('ends at once on a permanent failure, with what the install had rendered when it failed', async () => {
    const attempt = { version: '1.0.0', templateGeneration: 1, fetched: {}, rendered: { digest: 'sha256:1' } };
    let calls = 0;
    const install = (): Promise<InstallResult> => {
      calls++;
      return Promise.reject(
        ApplicationFailure.create({
          message: 'manifest invalid',
          type: 'MalformedManifest',
          nonRetryable: true,
          details: [attempt],
        }),
      );
    };
    const [outcome] = await run(install, [])(['a']);
    expect(calls).toBe(1);
    expect(outcome).toEqual({ failure: { reason: 'MalformedManifest', message: 'manifest invalid' }, attempt });
  });

  it('takes an untyped error as Failed, with its message', () => {
    expect(outcomeOfFailure(new TypeError('boom'))).toEqual({ failure: { reason: 'Failed', message: 'boom' } });
  });

  it('writes the failure log line of the module, as for an install activity of its own', async () => {
    const out: string[] = [];
    const logger = { warn: (m: string) => out.push(`WARN ${m}`), info: (m: string) => out.push(`INFO ${m}`) } as Logger;
    const log = activityFailureLog({ installRetryMs: 30_000, driftIntervalMs: 600_000 }, () => logger);
    const { install } = flaky({ b: 1 });
    await run(install, [log])(['a', 'b']);
    expect(out).toHaveLength(2);
    expect(out[0]).toBe(
      'WARN kyma/kcp-system/k1 (module b): installModule failed (RegistryUnavailable): registry of b unreachable; ' +
        'attempt 1 of 5, next in 0s; after the last, the workflow shows the failure and tries again after 30s, ' +
        'doubling up to 10m, or at the next change',
    );
    expect(out[1]).toMatch(
      /^INFO kyma\/kcp-system\/k1 \(module b\): installModule succeeded after 1 failed attempt in/,
    );
  });
});

describe('the runtime’s catalog sync that goes along with the installs', () => {
  it('syncs beside the installs, and tells how it went apart from them: tried again as a syncRuntimeCatalog attempt of its own', async () => {
    const { install } = flaky({});
    const { sync, calls } = flakyCatalog(1);
    const seen: string[] = [];
    const done = await batchOf(install, [recorder(seen)], sync)(['a'], CATALOG);
    expect(done).toEqual({ installs: [{ value: result('a') }], catalog: { applied: 4, deleted: 1, foreign: 0 } });
    expect(calls).toEqual([CATALOG, CATALOG]);
    expect(seen).toEqual(
      expect.arrayContaining([
        'installModule #1 a ok',
        'syncRuntimeCatalog #1 catalog failed',
        'syncRuntimeCatalog #2 catalog ok',
      ]),
    );
  });

  it('gives up after the third attempt with its typed reason, and the installs are not held back by it', async () => {
    const { install } = flaky({});
    const { sync, calls } = flakyCatalog(99);
    const done = await batchOf(install, [], sync)(['a', 'b'], CATALOG);
    expect(done.installs).toEqual([{ value: result('a') }, { value: result('b') }]);
    expect(done.catalog).toEqual({ failure: { reason: 'TargetClusterUnreachable', message: 'runtime unreachable' } });
    expect(calls).toHaveLength(RUNTIME_STEP_RETRY.maximumAttempts);
  });

  it('syncs no catalog unless asked', async () => {
    const { install } = flaky({});
    const { sync, calls } = flakyCatalog(0);
    const done = await batchOf(install, [], sync)(['a']);
    expect(done).toEqual({ installs: [{ value: result('a') }] });
    expect(calls).toHaveLength(0);
  });
});

describe('how long a module’s install waits before its next attempt', () => {
  it('doubles from 1 s up to 30 s, or waits what the failure asks (a Retry-After), at most 30 s', () => {
    const err = new Error('conflict');
    expect([1, 2, 3, 4, 5, 6].map((n) => nextAttemptDelayMs(MODULE_INSTALL_RETRY, n, err))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000,
    ]);
    expect(nextAttemptDelayMs(MODULE_INSTALL_RETRY, 1, retryAfter('RegistryUnavailable', 'slow down', 7000))).toBe(
      7000,
    );
    expect(nextAttemptDelayMs(MODULE_INSTALL_RETRY, 1, retryAfter('RegistryUnavailable', 'slow down', 3_600_000))).toBe(
      30_000,
    );
  });
});

describe('Limit', () => {
  it('runs at most its limit at once, the others in the order they came', async () => {
    const limit = new Limit(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const job = (n: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      order.push(n);
      running--;
      return n;
    };
    const done = await Promise.all([1, 2, 3, 4, 5].map((n) => limit.run(job(n))));
    expect(done).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });

  it('lets the next one run when one fails', async () => {
    const limit = new Limit(1);
    await expect(limit.run(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(limit.run(() => Promise.resolve(7))).resolves.toBe(7);
  });
});
