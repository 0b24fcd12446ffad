import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

// Workflow files must stay deterministic; the lint rule is what enforces it.
const workflowFile = 'test/fixtures/roundtrip-workflows.ts';

async function lintAsWorkflow(code: string): Promise<string[]> {
  const eslint = new ESLint();
  const [result] = await eslint.lintText(code, { filePath: workflowFile });
  // ESLint prefixes the configured message with what was restricted; keep our part.
  return (result?.messages ?? []).filter((m) => m.ruleId?.includes('no-restricted')).map((m) => m.message.replace(/^.* is restricted from being used\. /, ''));
}

describe('the workflow determinism lint rule', () => {
  it('bans Node built-ins in workflow code', async () => {
    expect(await lintAsWorkflow("import fs from 'node:fs';\nexport const x = fs;\n")).toEqual(['Workflows must be deterministic: no Node built-ins.']);
    expect(await lintAsWorkflow("import { request } from 'http';\nexport const x = request;\n")).toEqual(['Workflows must be deterministic: no Node built-ins.']);
  });

  it('bans the Kubernetes client in workflow code', async () => {
    const messages = await lintAsWorkflow("import { KubeConfig } from '@kubernetes/client-node';\nexport const x = KubeConfig;\n");
    expect(messages).toEqual(['Workflows must not talk to Kubernetes: use an activity.']);
  });

  it('allows activities only as type imports', async () => {
    expect(await lintAsWorkflow("import * as acts from '../../src/activities/index';\nexport const x = acts;\n")).toHaveLength(1);
    expect(await lintAsWorkflow("import type * as acts from '../../src/activities/index';\nexport type X = typeof acts;\n")).toEqual([]);
  });

  it('accepts the Temporal workflow API', async () => {
    expect(await lintAsWorkflow("import { sleep } from '@temporalio/workflow';\nexport async function w(): Promise<void> { await sleep(1); }\n")).toEqual([]);
  });
});
