// Supervision of the local stack's servers, on a Temporal dev server of the test's own (started
// by the stack's startTemporal in a temp dir): SIGKILLed, it is restarted on the same address
// and SQLite file, and a workflow started before the kill completes afterwards; stop() does not
// restart it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { startTemporal, type TemporalServer } from '../../src/localstack/temporal';
import * as activities from '../fixtures/roundtrip-activities';
import { stackInfo, uniqueName } from '../support/stack';

const workflowsPath = fileURLToPath(new URL('../fixtures/roundtrip-workflows.ts', import.meta.url));

async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a supervised Temporal dev server', () => {
  const logged: string[] = [];
  let dir: string;
  let temporal: TemporalServer;
  let connection: Connection;
  let native: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  let handle: WorkflowHandleWithFirstExecutionRunId;

  beforeAll(async () => {
    // The stack's lines go to stderr through log(): keep them, and pass them on.
    vi.stubEnv('KLM_QUIET', '');
    const write = process.stderr.write.bind(process.stderr);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return write(chunk);
    });
    dir = await mkdtemp(path.join(tmpdir(), 'klm-supervision-'));
    temporal = await startTemporal(stackInfo().tools.temporal, dir, { ui: false });
    connection = await Connection.connect({ address: temporal.address });
    native = await NativeConnection.connect({ address: temporal.address });
    const taskQueue = uniqueName('supervision');
    worker = await Worker.create({
      connection: native,
      namespace: temporal.namespace,
      taskQueue,
      workflowsPath,
      activities,
    });
    running = worker.run();
    const client = new Client({ connection, namespace: temporal.namespace });
    handle = await client.workflow.start('roundTrip', { taskQueue, workflowId: uniqueName('wf'), args: ['kyma'] });
  });

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await Promise.all([native?.close(), connection?.close()]);
    await temporal?.process.stop();
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is restarted after SIGKILL on the same address, and a workflow started before the kill completes', async () => {
    // The workflow ran its activity and waits for the signal: its state is in the SQLite file.
    await until('the activity to complete', async () =>
      (await handle.fetchHistory()).events?.some((e) => e.activityTaskCompletedEventAttributes),
    );
    const pid = temporal.process.pid();
    expect(pid).toBeGreaterThan(0);

    process.kill(pid!, 'SIGKILL');
    const line = await until('the restart line', () =>
      logged.find((l) =>
        l.includes('[stack] temporal exited unexpectedly (killed by SIGKILL, code 137); restarting it in 1s'),
      ),
    );
    expect(line).toContain(path.join(dir, 'temporal.log'));
    await until(
      'temporal to be up again',
      () => logged.some((l) => l.includes('[stack] temporal is up again after restart 1')),
      90_000,
    );
    expect(alive(pid!)).toBe(false);
    const newPid = temporal.process.pid();
    expect(newPid).not.toBe(pid);
    expect(alive(newPid!)).toBe(true);
    expect(temporal.process.hasExited()).toBe(false);

    // The same address answers, with the same data: the workflow is still there and running.
    const fresh = await Connection.connect({ address: temporal.address });
    try {
      const client = new Client({ connection: fresh, namespace: temporal.namespace });
      const described = await client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).describe();
      expect(described.status.name).toBe('RUNNING');
    } finally {
      await fresh.close();
    }

    // The worker and the client that lived through the kill finish it.
    await handle.signal('release', '!');
    expect(await handle.result()).toBe('hello kyma from activity greet!');
  }, 180_000);

  it('is not restarted when stopped', async () => {
    worker.shutdown();
    await running;
    const pid = temporal.process.pid();
    const before = logged.filter((l) => l.includes('exited unexpectedly')).length;
    await temporal.process.stop();
    expect(temporal.process.hasExited()).toBe(true);
    expect(temporal.process.pid()).toBeUndefined();
    // Longer than the first restart delay.
    await new Promise((r) => setTimeout(r, 2500));
    expect(alive(pid!)).toBe(false);
    expect(logged.filter((l) => l.includes('exited unexpectedly')).length).toBe(before);
  }, 60_000);
});
