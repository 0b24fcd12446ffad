// What the Temporal server spends, in CPU, on the kinds of work this product's workflows give it:
// a workflow task, a history event (a marker), a search-attribute upsert (a visibility write),
// a signal. Each experiment runs W workflows of one kind on the local stack's Temporal dev
// server (SQLite) and reads the server's CPU from /proc before and after; the figures per unit
// then come from the events and tasks the histories hold. Run: npx tsx bench/temporal-costs.ts
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startStack } from '../src/localstack/stack';
import { sample } from './processes';

const WORKFLOWS = fileURLToPath(new URL('./temporal-costs-workflows.ts', import.meta.url));
const W = 200;
const N = 20;

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stack = await startStack({ profile: 'minimal' });
  try {
    const temporal = stack.servers.find((s) => s.label === 'temporal')!;
    const info = stack.info;
    const connection = await Connection.connect({ address: info.temporalAddress });
    const client = new Client({ connection, namespace: info.temporalNamespace });
    const native = await NativeConnection.connect({ address: info.temporalAddress });
    const taskQueue = `costs-${Date.now()}`;
    const worker = await Worker.create({
      connection: native,
      namespace: info.temporalNamespace,
      taskQueue,
      workflowsPath: WORKFLOWS,
      activities: { noop: () => Promise.resolve() },
      maxCachedWorkflows: 1000,
    });
    const running = worker.run();
    const rows: string[] = [];
    for (const kind of ['tasksWorkflow', 'markersWorkflow', 'upsertsWorkflow', 'signalsWorkflow'] as const) {
      const before = sample(temporal.process.pid())!.cpuSeconds;
      const handles = await Promise.all(
        Array.from({ length: W }, (_, i) =>
          client.workflow.start(kind, { taskQueue, workflowId: `${kind}-${taskQueue}-${i}`, args: [N] }),
        ),
      );
      if (kind === 'signalsWorkflow')
        for (let k = 0; k < N; k++) await Promise.all(handles.map((h) => h.signal('poke')));
      await Promise.all(handles.map((h) => h.result()));
      const cpu = sample(temporal.process.pid())!.cpuSeconds - before;
      let events = 0;
      let tasks = 0;
      for (const h of handles.slice(0, 10)) {
        const hist = (await h.fetchHistory()).events ?? [];
        events += hist.length;
        tasks += hist.filter((e) => String(e.eventType) === '7' || e.workflowTaskCompletedEventAttributes).length;
      }
      events = (events / 10) * W;
      tasks = (tasks / 10) * W;
      rows.push(
        `| ${kind} | ${W} × ${N} | ${Math.round(events)} | ${Math.round(tasks)} | ${cpu.toFixed(2)} ` +
          `| ${((cpu * 1000) / events).toFixed(3)} | ${((cpu * 1000) / tasks).toFixed(3)} |`,
      );
      console.log(rows.at(-1));
    }
    console.log(
      [
        '| workflows | count | history events | workflow tasks | Temporal CPU-s | ms per event | ms per task |',
        '| --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n'),
    );
    worker.shutdown();
    await running;
    await native.close();
    await connection.close();
  } finally {
    await stack.stop();
  }
}

await main();
