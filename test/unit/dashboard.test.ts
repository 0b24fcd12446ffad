import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { registry } from '../../src/infra/metrics';

describe('deploy/grafana/klm-dashboard.json', () => {
  it('queries only metrics that the worker and bridge export (or the Temporal SDK and the process)', async () => {
    const dash = JSON.parse(await readFile('deploy/grafana/klm-dashboard.json', 'utf8')) as {
      panels: { targets: { expr: string }[] }[];
    };
    const ours = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    const used = dash.panels.flatMap((p) =>
      p.targets.flatMap((t) =>
        [...t.expr.matchAll(/\b([a-z_]+)(?:_bucket|_count|_sum)?(?=[{[ )])/g)].map((m) => m[1]!),
      ),
    );
    const metrics = used.filter((n) => n.startsWith('lifecycle_mgr_') || n.startsWith('klm_'));
    expect(metrics.length).toBeGreaterThan(5);
    for (const m of metrics) expect(ours.has(m.replace(/_(bucket|count|sum)$/, '')), m).toBe(true);
  });
});
