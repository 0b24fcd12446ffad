// npx tsx bench/replay-cpu.ts [--rounds N] [--stack-traces on|off]
//
// The workflow thread's cost, without servers: replays the committed Kyma histories
// (test/replay/histories/kyma-*.json) N times in one process and prints the process's CPU
// seconds (every thread's). Replaying runs the same workflow code through the same sandbox as a
// worker's workflow tasks, so what changes a workflow task's cost (the sandbox's stack traces,
// KLM_WORKFLOW_STACK_TRACES; the workflow's promises) changes this figure, in CPU seconds that
// do not depend on the machine's other load as a fleet bench's do.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../src/workers/worker';
import { workflowStackTraces } from '../src/workers/workflow-stack-traces';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, 'stack-traces': { type: 'string', default: 'off' } },
});
const rounds = Number(values.rounds);
const stackTraces = values['stack-traces'] === 'on';
workflowStackTraces(stackTraces);
Runtime.install({ logger: new DefaultLogger('WARN') });

const DIR = fileURLToPath(new URL('../test/replay/histories/', import.meta.url));
const files = (await readdir(DIR)).filter((f) => f.startsWith('kyma') && f.endsWith('.json'));
const histories = await Promise.all(
  files.map(async (f) => ({ workflowId: f, history: JSON.parse(await readFile(DIR + f, 'utf8')) as unknown })),
);
const workflowBundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });

async function replayAll(): Promise<void> {
  for await (const r of Worker.runReplayHistories({ workflowBundle, replayName: 'bench' }, histories))
    if (r.error) throw r.error;
}

await replayAll(); // warm-up: the sandbox and the bundle compiled
const before = process.cpuUsage();
for (let i = 0; i < rounds; i++) await replayAll();
const cpu = process.cpuUsage(before);
console.log(
  `${rounds} rounds of ${files.length} Kyma histories, stack traces ${stackTraces ? 'on' : 'off'}: ` +
    `${((cpu.user + cpu.system) / 1e6).toFixed(2)} CPU-s`,
);
