// Workflows for bench/temporal-costs.ts: each exercises one kind of work the Temporal server
// does for this product's workflows, so that its CPU per unit can be told apart.
import {
  condition,
  defineSignal,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { SA } from '../src/api/search-attributes';

const { noop } = proxyLocalActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10 seconds' });

/** `n` workflow tasks of their own: a 1 ms timer each (TimerStarted, TimerFired and a task: 5 events). */
export async function tasksWorkflow(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await sleep(1);
}

/** `n` markers in one task: local activities that complete at once (one MarkerRecorded each). */
export async function markersWorkflow(n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => noop()));
}

/** `n` search-attribute upserts (visibility writes), one per task so that none is merged. */
export async function upsertsWorkflow(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    upsertSearchAttributes([{ key: SA.KymaState, value: `state-${i}` }]);
    await sleep(1);
  }
}

export const poke = defineSignal('poke');

/** Waits for `n` signals, each a task of its own (WorkflowExecutionSignaled and a task: 4 events). */
export async function signalsWorkflow(n: number): Promise<void> {
  let seen = 0;
  setHandler(poke, () => void seen++);
  while (seen < n) {
    const before = seen;
    await condition(() => seen > before);
  }
}
