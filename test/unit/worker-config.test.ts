// The worker's tuning from its environment: what an operator sets, and a clear error for what
// cannot work.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromEnv, DEFAULT_WORKFLOW_CACHE_SIZE } from '../../src/infra/config';
import { BuildIdUnknownError, buildId } from '../../src/workers/build-id';

describe('worker tuning', () => {
  it('scales task polls with the backlog unless told a fixed number', () => {
    expect(configFromEnv({}).taskPollers).toBe('autoscaling');
    expect(configFromEnv({ KLM_TASK_POLLERS: 'autoscaling' }).taskPollers).toBe('autoscaling');
    expect(configFromEnv({ KLM_TASK_POLLERS: '40' }).taskPollers).toBe(40);
  });

  it('refuses a number of polls the SDK cannot use, naming the variable', () => {
    for (const bad of ['1', 'many', '2.5'])
      expect(() => configFromEnv({ KLM_TASK_POLLERS: bad })).toThrow(
        /KLM_TASK_POLLERS must be "autoscaling" or a whole number of at least 2/,
      );
  });

  it('keeps workflow code without stack traces unless told on, and refuses anything but on and off', () => {
    expect(configFromEnv({}).workflowStackTraces).toBe(false);
    expect(configFromEnv({ KLM_WORKFLOW_STACK_TRACES: 'on' }).workflowStackTraces).toBe(true);
    expect(configFromEnv({ KLM_WORKFLOW_STACK_TRACES: 'off' }).workflowStackTraces).toBe(false);
    expect(() => configFromEnv({ KLM_WORKFLOW_STACK_TRACES: 'yes' })).toThrow(
      /KLM_WORKFLOW_STACK_TRACES must be "on" or "off", not "yes"/,
    );
  });

  it('takes the workflow cache size and a prebuilt workflow bundle', () => {
    expect(configFromEnv({}).workflowCacheSize).toBe(DEFAULT_WORKFLOW_CACHE_SIZE);
    expect(configFromEnv({}).workflowBundle).toBeUndefined();
    const c = configFromEnv({ KLM_WORKFLOW_CACHE_SIZE: '800', KLM_WORKFLOW_BUNDLE: '/opt/klm/workflows.js' });
    expect([c.workflowCacheSize, c.workflowBundle]).toEqual([800, '/opt/klm/workflows.js']);
    expect(() => configFromEnv({ KLM_WORKFLOW_CACHE_SIZE: 'lots' })).toThrow(
      /KLM_WORKFLOW_CACHE_SIZE must be a whole number/,
    );
    expect(() => configFromEnv({ KLM_NEWS_WINDOW: 'soon' })).toThrow('KLM_NEWS_WINDOW: not a duration: "soon"');
  });

  it('serves the Kymas of the namespaces KLM_KYMA_NAMESPACES lists, all when unset, and refuses a name that is no namespace', () => {
    expect(configFromEnv({}).kymaNamespaces).toBeUndefined();
    expect(configFromEnv({ KLM_KYMA_NAMESPACES: ' ' }).kymaNamespaces).toBeUndefined();
    expect(configFromEnv({ KLM_KYMA_NAMESPACES: 'kcp-system, fleet-2,kcp-system' }).kymaNamespaces).toEqual([
      'kcp-system',
      'fleet-2',
    ]);
    expect(() => configFromEnv({ KLM_KYMA_NAMESPACES: 'kcp-system,Fleet_2' })).toThrow(
      'KLM_KYMA_NAMESPACES must list namespace names separated by commas; "Fleet_2" is not one',
    );
  });

  it("watches whole target clusters unless KLM_TARGET_WATCH_SCOPE asks for the context's namespace, and refuses another scope", () => {
    expect(configFromEnv({}).targetWatchScope).toBe('cluster');
    expect(configFromEnv({ KLM_TARGET_WATCH_SCOPE: 'context-namespace' }).targetWatchScope).toBe('context-namespace');
    expect(() => configFromEnv({ KLM_TARGET_WATCH_SCOPE: 'namespace' })).toThrow(
      'KLM_TARGET_WATCH_SCOPE must be "cluster" or "context-namespace", not "namespace"',
    );
  });

  it('names the maintenance policy ConfigMap as namespace/name, or none', () => {
    expect(configFromEnv({}).maintenancePolicy).toBeUndefined();
    expect(configFromEnv({ KLM_MAINTENANCE_POLICY: 'kcp-system/maintenance' }).maintenancePolicy).toEqual({
      namespace: 'kcp-system',
      name: 'maintenance',
    });
    for (const bad of ['maintenance', 'a/b/c', '/b'])
      expect(() => configFromEnv({ KLM_MAINTENANCE_POLICY: bad })).toThrow(
        /KLM_MAINTENANCE_POLICY must be namespace\/name of a ConfigMap/,
      );
  });
});

describe('worker deployment versions', () => {
  it("runs as a version of the task queue's deployment unless KLM_DEPLOYMENT_NAME names another, and refuses a name Temporal cannot join", () => {
    expect(configFromEnv({}).deployment).toEqual({ name: 'klm', promotion: 'auto' });
    expect(configFromEnv({ KLM_TASK_QUEUE: 'fleet.eu' }).deployment.name).toBe('fleet-eu');
    const c = configFromEnv({ KLM_DEPLOYMENT_NAME: 'kcp', KLM_BUILD_ID: '0.2.0+abc', KLM_VERSION_PROMOTION: 'manual' });
    expect(c.deployment).toEqual({ name: 'kcp', buildId: '0.2.0+abc', promotion: 'manual' });
    expect(() => configFromEnv({ KLM_DEPLOYMENT_NAME: 'klm.prod' })).toThrow(/KLM_DEPLOYMENT_NAME may hold letters/);
    expect(() => configFromEnv({ KLM_BUILD_ID: 'a b' })).toThrow(/KLM_BUILD_ID may hold letters/);
    expect(() => configFromEnv({ KLM_VERSION_PROMOTION: 'sometimes' })).toThrow(
      'KLM_VERSION_PROMOTION must be auto or manual, not "sometimes"',
    );
  });

  it('bounds a run of a Kyma workflow to a day unless KLM_MAX_RUN_AGE says otherwise', () => {
    expect(configFromEnv({}).settings.maxRunAgeMs).toBe(24 * 3_600_000);
    expect(configFromEnv({ KLM_MAX_RUN_AGE: '6h' }).settings.maxRunAgeMs).toBe(6 * 3_600_000);
  });

  it('names the code and its settings in the build id: the package version, the commit, a digest of the settings', () => {
    const settings = configFromEnv({}).settings;
    const id = buildId({ settings });
    expect(id).toMatch(/^0\.\d+\.\d+-[0-9a-f]{12}(-dirty[0-9a-f]{8})?-s[0-9a-f]{8}$/);
    // Other settings, another version (the runs move to it as to new code); the same, the same.
    expect(buildId({ settings: { ...settings, driftIntervalMs: 60_000 } })).not.toBe(id);
    expect(buildId({ settings: { ...settings } })).toBe(id);
    expect(buildId({ explicit: 'v0.1.0', settings })).toBe('v0.1.0');
  });

  it('refuses to guess a build id for code of unknown commit', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-nogit-'));
    await writeFile(path.join(dir, 'package.json'), '{"version":"0.1.0"}');
    expect(() => buildId({ settings: configFromEnv({}).settings, root: dir })).toThrow(BuildIdUnknownError);
    await mkdir(path.join(dir, 'dist'));
    await writeFile(path.join(dir, 'dist', 'build.json'), '{"started":1,"commit":"0123456789abcdef0123"}');
    expect(buildId({ settings: configFromEnv({}).settings, root: dir })).toMatch(/^0\.1\.0-0123456789ab-s[0-9a-f]{8}$/);
  });
});
