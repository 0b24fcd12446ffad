// Starts one local stack for the whole test run and hands its addresses to the test files.
import type { TestProject } from 'vitest/node';
import { startStack, type Stack, type StackInfo } from '../src/localstack/stack';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

let stack: Stack | undefined;

export async function setup(project: TestProject): Promise<void> {
  stack = await startStack({ profile: 'full' });
  project.provide('stack', stack.info);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
