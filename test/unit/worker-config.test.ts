// The worker's tuning from its environment: what an operator sets, and a clear error for what
// cannot work.
import { describe, expect, it } from 'vitest';
import { configFromEnv, DEFAULT_WORKFLOW_CACHE_SIZE } from '../../src/infra/config';

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
