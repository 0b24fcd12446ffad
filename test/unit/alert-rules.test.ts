// The alert rules of deploy/kustomize/components/alerts ask for series the processes export, by
// labels those series carry: a renamed metric or label would leave an alert that never fires.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { registry } from '../../src/infra/metrics';

interface Rule {
  alert: string;
  expr: string;
  annotations: { summary: string; description: string };
}

describe('the alert rules', () => {
  it('name only metrics and labels the processes export, and tell what to do', async () => {
    const doc = parse(await readFile('deploy/kustomize/components/alerts/prometheusrule.yaml', 'utf8')) as {
      spec: { groups: { rules: Rule[] }[] };
    };
    const rules = doc.spec.groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert)).toEqual([
      'KymaInError',
      'ModuleInstallsFailing',
      'UnexpectedActivityFailures',
      'BridgeSignalsFailing',
      'NoBridgeLeader',
      'BridgeShardUnserved',
      'BridgeShardServedTwice',
    ]);
    const exported = (await registry.getMetricsAsJSON()) as unknown as { name: string }[];
    for (const r of rules) {
      const names = [...r.expr.matchAll(/\b((?:lifecycle_mgr|klm)_\w+)/g)].map((m) => m[1]!);
      expect(names.length, r.alert).toBeGreaterThan(0);
      for (const name of names) {
        const metric = registry.getSingleMetric(name) as unknown as { labelNames?: string[] } | undefined;
        expect(metric, `${r.alert}: ${name}`).toBeDefined();
        expect(exported.map((m) => m.name)).toContain(name);
        // Labels in selectors and in `by (...)` are the metric's own.
        const labels = [
          ...r.expr.matchAll(/(\w+)=~?"/g),
          ...[...r.expr.matchAll(/by \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((l) => [l, l.trim()])),
        ].map((m) => m[1]!.trim());
        for (const l of labels) expect(metric?.labelNames ?? [], `${r.alert}: ${name} has no label ${l}`).toContain(l);
      }
      expect(r.annotations.summary.length, r.alert).toBeGreaterThan(10);
      expect(r.annotations.description.length, r.alert).toBeGreaterThan(20);
    }
  });
});
