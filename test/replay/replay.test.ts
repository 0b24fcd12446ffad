// Replays committed histories against the current workflow code: a change to the command
// sequence that is not guarded with patched() fails here.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../../src/workers/worker';

const DIR = fileURLToPath(new URL('./histories/', import.meta.url));

describe('replaying committed histories', async () => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.json')).sort();
  let bundle: { code: string };
  beforeAll(async () => {
    bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  });

  it('has at least one history of each workflow type', async () => {
    const types = new Set<string>();
    for (const f of files) {
      const h = JSON.parse(await readFile(DIR + f, 'utf8')) as { events?: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[] };
      types.add(h.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '');
    }
    expect([...types].sort()).toEqual(['kymaWorkflow', 'moduleWorkflow']);
  });

  it.each(files)('replays %s without nondeterminism', async (f) => {
    // The Temporal CLI's JSON export; the worker converts it itself.
    const history: unknown = JSON.parse(await readFile(DIR + f, 'utf8'));
    await Worker.runReplayHistory({ workflowBundle: bundle, replayName: f }, history);
  });
});
