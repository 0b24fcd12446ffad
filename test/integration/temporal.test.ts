import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SEARCH_ATTRIBUTES } from '../../src/api';
import * as activities from '../fixtures/roundtrip-activities';
import { stackInfo, uniqueName } from '../support/stack';

const workflowsPath = fileURLToPath(new URL('../fixtures/roundtrip-workflows.ts', import.meta.url));

async function roundTrip(client: Client, connection: NativeConnection, namespace: string): Promise<string> {
  const taskQueue = uniqueName('roundtrip');
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
  return await worker.runUntil(async () => {
    const handle = await client.workflow.start('roundTrip', { taskQueue, workflowId: uniqueName('wf'), args: ['kyma'] });
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
  });
});
