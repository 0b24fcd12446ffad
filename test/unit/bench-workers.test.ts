// The bench with several workers: each one's task counts from its SDK metrics, and the report's
// Workers section; a report written before --workers renders as it did.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { renderReport, type BenchReport } from '../../bench/report';
import { taskCounts } from '../../bench/sdk-metrics';

const before = JSON.parse(
  readFileSync(new URL('../../bench/results/2026-11-26T05-22-31-663Z.json', import.meta.url), 'utf8'),
) as BenchReport;

describe('the bench with several workers', () => {
  it('counts what a worker executed from its SDK metrics, over all label sets, local activities apart', async () => {
    const text = [
      '# TYPE temporal_workflow_task_execution_latency histogram',
      'temporal_workflow_task_execution_latency_bucket{namespace="default",task_queue="bench",workflow_type="KymaWorkflow",le="+Inf"} 7',
      'temporal_workflow_task_execution_latency_count{namespace="default",task_queue="bench",workflow_type="KymaWorkflow"} 7',
      'temporal_workflow_task_execution_latency_count{namespace="default",task_queue="bench",workflow_type="RolloutWorkflow"} 2',
      'temporal_activity_execution_latency_count{activity_type="installModule",namespace="default",task_queue="bench"} 5',
      'temporal_local_activity_execution_latency_count{activity_type="writeKymaChanges",namespace="default",task_queue="bench"} 11',
      'temporal_activity_schedule_to_start_latency_count{namespace="default",task_queue="bench"} 5',
    ].join('\n');
    const server = createServer((_req, res) => res.end(text));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      expect(await taskCounts(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).toEqual({
        workflowTasks: 9,
        activities: 5,
        localActivities: 11,
      });
    } finally {
      server.close();
    }
  });

  it('renders a report from before --workers as one worker, without a Workers section', () => {
    const md = renderReport(before);
    expect(md).not.toContain('## Workers');
    expect(md).toContain('| worker peak RSS (VmHWM) | 1722 MB |');
    expect(md).toContain('| CPU of worker + bridge + Temporal per module install |');
  });

  it("shows each worker's share of the tasks, and says which figures add up the workers", () => {
    const w = (i: number, counts: [number, number, number]) => ({
      label: `worker-${i}`,
      pid: 100 + i,
      peakRssMB: 400 + i,
      workflowTasks: counts[0],
      activities: counts[1],
      localActivities: counts[2],
    });
    const cpu = (p: typeof before.cpu.install, a: number, b: number) => [
      { ...p[0]!, label: 'worker-1', pid: 101, cpuSeconds: a },
      { ...p[0]!, label: 'worker-2', pid: 102, cpuSeconds: b },
      ...p.slice(1),
    ];
    const md = renderReport({
      ...before,
      workers: [w(1, [300, 10, 30]), w(2, [100, 30, 10])],
      workerPeakRssMB: 803,
      cpu: { ...before.cpu, install: cpu(before.cpu.install, 40, 20), promotion: cpu(before.cpu.promotion, 3, 1) },
    });
    expect(md).toContain('## Workers');
    expect(md).toContain('| worker-1 (101) | 40.0 | 3.0 | 401 MB | 300 (75.0 %) | 10 (25.0 %) | 30 (75.0 %) |');
    expect(md).toContain('| worker-2 (102) | 20.0 | 1.0 | 402 MB | 100 (25.0 %) | 30 (75.0 %) | 10 (25.0 %) |');
    expect(md).toContain('| all 2 (sum) | 60.0 | 4.0 | 803 MB | 400 | 40 | 40 |');
    expect(md).toContain('| 2 workers (sum) peak RSS (VmHWM) | 803 MB (401 + 402) |');
    expect(md).toContain('| CPU of 2 workers (sum) + bridge + Temporal per module install |');
    expect(md).toContain('| idle CPU of 2 workers (sum) + bridge |');
  });
});
