import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SEARCH_ATTRIBUTES } from '../../src/api';
import { missingSearchAttributes } from '../../src/temporal/search-attributes';
import * as activities from '../fixtures/roundtrip-activities';
import { eventually } from '../support/klm';
import { stackInfo, uniqueName } from '../support/stack';

const workflowsPath = fileURLToPath(new URL('../fixtures/roundtrip-workflows.ts', import.meta.url));

async function roundTrip(client: Client, connection: NativeConnection, namespace: string): Promise<string> {
  const taskQueue = uniqueName('roundtrip');
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
  return await worker.runUntil(async () => {
    const handle = await client.workflow.start('roundTrip', {
      taskQueue,
      workflowId: uniqueName('wf'),
      args: ['kyma'],
    });
    await handle.signal('release', '!');
    return (await handle.result()) as string;
  });
}

describe('Temporal', () => {
  describe('through @temporalio/testing with the built CLI binary', () => {
    let env: TestWorkflowEnvironment;
    beforeAll(async () => {
      env = await TestWorkflowEnvironment.createLocal({
        server: { executable: { type: 'existing-path', path: stackInfo().tools.temporal }, ip: '127.0.0.1', ui: false },
      });
    });
    afterAll(async () => {
      await env?.teardown();
    });

    it('runs a workflow that calls an activity and takes a signal', async () => {
      const result = await roundTrip(env.client, env.nativeConnection, env.namespace ?? 'default');
      expect(result).toBe('hello kyma from activity greet!');
    });
  });

  describe("the local stack's dev server", () => {
    it('runs a workflow that calls an activity and takes a signal', async () => {
      const { temporalAddress, temporalNamespace } = stackInfo();
      const native = await NativeConnection.connect({ address: temporalAddress });
      const connection = await Connection.connect({ address: temporalAddress });
      try {
        const client = new Client({ connection, namespace: temporalNamespace });
        expect(await roundTrip(client, native, temporalNamespace)).toBe('hello kyma from activity greet!');
      } finally {
        await Promise.all([native.close(), connection.close()]);
      }
    });

    it('has the Kyma search attributes registered', async () => {
      const { temporalAddress, temporalNamespace } = stackInfo();
      const connection = await Connection.connect({ address: temporalAddress });
      try {
        const res = await connection.operatorService.listSearchAttributes({ namespace: temporalNamespace });
        for (const name of Object.keys(SEARCH_ATTRIBUTES)) expect(res.customAttributes).toHaveProperty(name);
      } finally {
        await connection.close();
      }
    });

    it('stops the worker and the bridge at start when the namespace lacks the search attributes, with the command that registers them', async () => {
      const { temporalAddress, tools } = stackInfo();
      const connection = await Connection.connect({ address: temporalAddress });
      try {
        const namespace = uniqueName('bare');
        await promisify(execFile)(tools.temporal, [
          'operator',
          'namespace',
          'create',
          '--namespace',
          namespace,
          '--address',
          temporalAddress,
        ]);
        const missing = await eventually(
          'the new namespace to answer',
          async () => await missingSearchAttributes(connection, namespace).catch(() => undefined),
        );
        expect(missing).toEqual(Object.keys(SEARCH_ATTRIBUTES));

        const run = (entry: string) =>
          promisify(execFile)(process.execPath, ['--import', 'tsx', entry], {
            env: {
              ...process.env,
              TEMPORAL_ADDRESS: temporalAddress,
              TEMPORAL_NAMESPACE: namespace,
              KLM_METRICS_PORT: '',
            },
            timeout: 60_000,
          }).then(
            () => ({ code: 0, stderr: '' }),
            (e: { code?: number; stderr?: string }) => ({ code: e.code, stderr: e.stderr ?? '' }),
          );
        const command = `temporal operator search-attribute create --namespace ${namespace} --name KymaName --type Keyword`;
        for (const [entry, who] of [
          ['src/workers/main.ts', 'worker'],
          ['src/starter/main.ts', 'bridge'],
        ] as const) {
          const { code, stderr } = await run(entry);
          expect(code, `${who} exit code`).toBe(1);
          expect(stderr).toContain(
            `${who}: the Temporal namespace "${namespace}" lacks the search attributes KymaName, KymaNamespace`,
          );
          expect(stderr).toContain(command);
          // One message to act on, not a stack trace.
          expect(stderr).not.toMatch(/\n\s+at /);
        }

        // The command it names is the one that fixes it.
        const printed = (await run('src/workers/main.ts')).stderr
          .split('\n')
          .find((l) => l.trim().startsWith('temporal operator'))!
          .trim();
        const [, ...args] = printed.split(/\s+/);
        await promisify(execFile)(tools.temporal, [...args, '--address', temporalAddress]);
        expect(await missingSearchAttributes(connection, namespace)).toEqual([]);
      } finally {
        await connection.close();
      }
    });
  });
});
