// What the Kyma workflow's code costs the workflow thread per workflow task, counted: the SDK's
// sandbox runs a promise hook that captures and source-maps a stack trace for every promise
// workflow code makes (the `__stack_trace` query's data; an `await` makes one too), which is most
// of what an activation costs. This replays the committed Kyma histories (test/replay/histories)
// in this process, counts the promises made inside the sandbox per workflow task, and reads the
// CPU the replays took (noisy; the count is the figure to compare). No server needed.
// Run: npx tsx bench/workflow-promises.ts [rounds]
import { readdir, readFile } from 'node:fs/promises';
import { promiseHooks } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../src/workers/worker';

const DIR = fileURLToPath(new URL('../test/replay/histories/', import.meta.url));

interface History {
  events: { eventType?: string }[];
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  // The last task of each history asks for a local activity no replay worker has: Core says so at WARN.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR' }, forward: {} } },
  });
  const files = (await readdir(DIR)).filter((f) => f.startsWith('kyma-workflow') && f.endsWith('.json')).sort();
  const histories = await Promise.all(files.map(async (f) => JSON.parse(await readFile(DIR + f, 'utf8')) as History));
  const tasks = histories
    .flatMap((h) => h.events)
    .filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED').length;
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  // In the worker's own thread (debug mode), where this process' hook sees the sandbox's promises:
  // those are made by the sandbox context's Promise, not this context's.
  let promises = 0;
  const stop = promiseHooks.onInit((p) => {
    if (p.constructor !== Promise) promises++;
  }) as () => void;
  const options = { workflowBundle, debugMode: true, reuseV8Context: true } as ReplayWorkerOptions;
  // One replay worker for every round: its start (the bundle loaded into its context) is paid once.
  const replays = Array.from({ length: rounds }, (_, round) =>
    histories.map((history, i) => ({ workflowId: `${files[i]}-${round}`, history })),
  ).flat();
  const cpu = process.cpuUsage();
  for await (const r of Worker.runReplayHistories({ ...options, replayName: 'workflow-promises' }, replays))
    if (r.error) throw new Error(`${r.workflowId}: ${r.error.message}`);
  const used = process.cpuUsage(cpu);
  stop();
  const perRound = promises / rounds;
  console.log(`${files.length} Kyma histories, ${tasks} workflow tasks, ${rounds} rounds`);
  console.log(
    `sandbox promises per replay of them all: ${perRound}; per workflow task: ${(perRound / tasks).toFixed(1)}`,
  );
  console.log(`CPU per round: ${((used.user + used.system) / 1000 / rounds).toFixed(0)} ms (noisy)`);
}

await main();
