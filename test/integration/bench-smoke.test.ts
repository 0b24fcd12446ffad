import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { BenchReport } from '../../bench/report';

const exec = promisify(execFile);

/** Every leaf of the report that should be a figure. */
function figures(r: BenchReport): [string, unknown][] {
  return [
    ['allReadySeconds', r.allReadySeconds],
    ['perKymaReadySeconds.p50', r.perKymaReadySeconds.p50],
    ['perKymaReadySeconds.p95', r.perKymaReadySeconds.p95],
    ['perKymaReadySeconds.p99', r.perKymaReadySeconds.p99],
    ['promotion.firstSeconds', r.promotion.firstSeconds],
    ['promotion.lastSeconds', r.promotion.lastSeconds],
    ['statusPropagation.p50Seconds', r.statusPropagation.p50Seconds],
    ['statusPropagation.p95Seconds', r.statusPropagation.p95Seconds],
    ['promotion.inClusterFirstSeconds', r.promotion.inClusterFirstSeconds],
    ['promotion.inClusterLastSeconds', r.promotion.inClusterLastSeconds],
    ['promotion.loopSeconds', r.promotion.loopSeconds],
    ['stagedPromotion.firstSeconds', r.stagedPromotion.firstSeconds],
    ['stagedPromotion.lastSeconds', r.stagedPromotion.lastSeconds],
    ['stagedPromotion.inClusterLastSeconds', r.stagedPromotion.inClusterLastSeconds],
    ...r.stagedPromotion.waves.map((w, i): [string, unknown] => [
      `stagedPromotion.waves[${i}].lastSeconds`,
      w.lastSeconds,
    ]),
    ['idleCpuSecondsPerMinute', r.idleCpuSecondsPerMinute],
    ['historyEventsPerModuleInstall', r.historyEventsPerModuleInstall],
    ['workerPeakRssMB', r.workerPeakRssMB],
    ['installCpuMsPerModule', r.installCpuMsPerModule],
    ['loop.seconds', r.loop.seconds],
    ['loop.ratio', r.loop.ratio],
    ['requests.ratio', r.requests.ratio],
    ['bridgePerCluster.rssMB', r.bridgePerCluster.rssMB],
    ['bridgePerCluster.heapMB', r.bridgePerCluster.heapMB],
    ['workflowTasks.p99Seconds', r.workflowTasks.p99Seconds],
    ...r.growth.map((g, i): [string, unknown] => [`growth[${i}].allReadySeconds`, g.allReadySeconds]),
    ...Object.entries(r.requests.engine.byVerb).map(([v, x]): [string, unknown] => [`requests.engine.${v}`, x]),
    ...r.cpu.install.map((c): [string, unknown] => [`cpu.install.${c.label}`, c.cpuSeconds]),
  ];
}

describe('npm run bench (smoke mode, N = 5)', () => {
  it('writes a JSON and a Markdown report in which every figure is a number', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'klm-bench-'));
    await exec(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--out', out], {
      env: { ...process.env, KLM_QUIET: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
    const files = (await readdir(out)).sort();
    expect(files.map((f) => path.extname(f))).toEqual(['.json', '.md']);
    const report = JSON.parse(await readFile(path.join(out, files[0]!), 'utf8')) as BenchReport;
    expect(report.kymas).toBe(5);
    expect(report.statusPropagation.samples).toBeGreaterThanOrEqual(10);
    expect(report.growth.map((g) => g.kymas)).toEqual([2, 5]);
    // The install's API requests are counted by verb: the engine applies (server-side) and reads.
    expect(report.requests.engine.byVerb.APPLY, 'APPLY per module install').toBeGreaterThan(0);
    expect(report.requests.engine.byVerb.GET, 'GET per module install').toBeGreaterThan(0);
    expect(report.requests.loop.byVerb.APPLY, 'the loop applies').toBeGreaterThan(0);
    // CPU by pid: worker and bridge are processes of their own and worked; so did Temporal.
    const cpu = new Map(report.cpu.install.map((c) => [c.label, c]));
    for (const p of ['worker', 'bridge', 'temporal', 'kube-apiserver'])
      expect(cpu.get(p)?.cpuSeconds, `${p} CPU-s`).toBeGreaterThan(0);
    expect(cpu.get('worker')!.pid).not.toBe(cpu.get('bridge')!.pid);
    expect(report.workerPeakRssMB).toBeGreaterThan(50);
    expect(report.workflowTasks.count).toBeGreaterThan(0);
    // One worker by default, counted in the Workers section: it executed the workflow tasks and activities.
    expect(report.workers?.map((w) => w.label)).toEqual(['worker']);
    expect(report.workers![0]!.workflowTasks).toBeGreaterThan(0);
    expect(report.workers![0]!.activities).toBeGreaterThan(0);
    // The staged promotion went through the default waves (1 %, 10 %, 30 % of the 2 + 5 Kymas, then the rest) and completed.
    expect(report.stagedPromotion.waves.map((w) => w.size)).toEqual([1, 1, 3, 2]);
    expect(report.stagedPromotion.phase).toBe('Completed');
    for (const [name, value] of figures(report)) {
      expect(typeof value, name).toBe('number');
      expect(Number.isFinite(value), name).toBe(true);
    }
    const md = await readFile(path.join(out, files[1]!), 'utf8');
    expect(md).toContain("## Issue 38's targets: this product beside upstream, per runtime");
    expect(md).toContain('## Where a module install goes, by concern');
    // The production topology at the smoke size: one further API server, each Kyma a runtime of its own on it.
    expect(report.targetClusters).toBe(1);
    expect(report.distinctCredentials).toBe(true);
    expect(report.concerns?.perInstall.find((c) => c.concern === 'install')?.events).toBeGreaterThan(0);
    expect(report.klmPeakRssMB).toBeGreaterThan(report.workerPeakRssMB);
    expect(md).toContain('| APPLY |');
    expect(md).toContain('## Workers');
    expect(md).toContain('What is shared:');
  }, 300_000);
});
