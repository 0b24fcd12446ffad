import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../src/workers/workflow-stack-traces.ts', import.meta.url));

/** In a fresh process: the switch set, then the stack trace limit of the process's own context and of a new worker thread's sandbox. */
function limitsWith(on: boolean): { main: number; frames: number; sandbox: number } {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { workflowStackTraces } from ${JSON.stringify(MODULE)};
    workflowStackTraces(${on});
    const frames = new Error('x').stack.split('\\n').length - 1;
    const probe = "const vm = process.getBuiltinModule('node:vm'); " +
      "process.getBuiltinModule('node:worker_threads').parentPort" +
      ".postMessage(vm.runInContext('Error.stackTraceLimit', vm.createContext({})))";
    const w = new Worker(probe, { eval: true });
    w.once('message', (sandbox) => { console.log(JSON.stringify({ main: Error.stackTraceLimit, frames, sandbox })); w.terminate(); });
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out) as { main: number; frames: number; sandbox: number };
}

describe('stack traces in workflow code', () => {
  it('are off by default: a sandbox made after has none, the process keeps its own', () => {
    const l = limitsWith(false);
    expect(l.sandbox).toBe(0);
    expect(l.main).toBe(10);
    expect(l.frames).toBeGreaterThan(0);
  });

  it('stay when switched on', () => {
    expect(limitsWith(true).sandbox).toBe(10);
  });
});
