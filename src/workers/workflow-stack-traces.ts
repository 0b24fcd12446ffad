// Stack traces in the workflow sandbox: off unless KLM_WORKFLOW_STACK_TRACES=on. The SDK's
// sandbox captures a stack trace for every promise workflow code makes (for the Temporal UI's
// Stack Trace view) and maps each frame through the bundle's source map; in a profile it was a
// quarter of the workflow thread's CPU, and replaying the committed Kyma histories 15 times
// took 15.4–15.9 CPU-s with them, 10.7–11.2 without (bench/replay-cpu.ts). Without them the UI's
// stack trace is empty and an error thrown in workflow code carries its message but no stack:
// replaying its history with them on shows where it came from. V8 gives a new context the stack
// trace limit of its flag: set to 0 before the worker starts its workflow thread, it holds for
// that thread's contexts; the process's own context, made before, keeps its limit and its stacks.
import { setFlagsFromString } from 'node:v8';

/** Before the worker is created: workflow code's stack traces, on or (the default) off. */
export function workflowStackTraces(on: boolean): void {
  if (!on) setFlagsFromString('--stack-trace-limit=0');
}
