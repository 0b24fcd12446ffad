// Replays committed histories against the current workflow code: a change to the command
// sequence that is not guarded with patched() fails here (docs/contributor/workflow-versioning.md).
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../../src/workers/worker';

const DIR = fileURLToPath(new URL('./histories/', import.meta.url));
const WORKFLOWS_DIR = fileURLToPath(new URL('../../src/workflows/', import.meta.url));

interface History {
  events?: { markerRecordedEventAttributes?: { details?: Record<string, { payloads?: { data?: string }[] }> } }[];
}

/** The patch ids a history's markers record: each in a base64 JSON payload, {"id":"<patch id>",...}. */
function patchesOf(history: History): Set<string> {
  const ids = new Set<string>();
  for (const e of history.events ?? []) {
    for (const p of e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []) {
      if (p.data) ids.add((JSON.parse(Buffer.from(p.data, 'base64').toString('utf8')) as { id: string }).id);
    }
  }
  return ids;
}

describe('replaying committed histories', async () => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.json')).sort();
  let bundle: { code: string };
  beforeAll(async () => {
    bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  });

  it('has at least one history of each workflow type', async () => {
    const types = new Set<string>();
    for (const f of files) {
      const h = JSON.parse(await readFile(DIR + f, 'utf8')) as {
        events?: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[];
      };
      types.add(h.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '');
    }
    expect([...types].sort()).toEqual(['kymaWorkflow', 'rolloutWorkflow']);
  });

  it('has, for every patched() id in the workflows, a history recorded with it and one from before it', async () => {
    const source = (
      await Promise.all(
        (await readdir(WORKFLOWS_DIR)).filter((f) => f.endsWith('.ts')).map((f) => readFile(WORKFLOWS_DIR + f, 'utf8')),
      )
    ).join('\n');
    const ids = [...new Set([...source.matchAll(/patched\('([\w-]+)'\)/g)].map((m) => m[1]!))].sort();
    const histories = await Promise.all(
      files.map(async (f) => patchesOf(JSON.parse(await readFile(DIR + f, 'utf8')) as History)),
    );
    const marked = (id: string) => histories.filter((h) => h.has(id));
    for (const id of ids) {
      expect(marked(id).length, `histories recorded with patch ${id}`).toBeGreaterThan(0);
      expect(marked(id).length, `histories from before patch ${id}`).toBeLessThan(histories.length);
    }
  });

  it.each(files)('replays %s without nondeterminism', async (f) => {
    // The Temporal CLI's JSON export; the worker converts it itself.
    const history: unknown = JSON.parse(await readFile(DIR + f, 'utf8'));
    await Worker.runReplayHistory({ workflowBundle: bundle, replayName: f }, history);
  });
});
