// Temporal as users run it: reachable only over TLS with a client certificate. A TLS terminator
// that demands a certificate from its own CA stands in front of the dev server; the worker and
// the bridge, started as processes with nothing but the SDK's TEMPORAL_* settings, reach it
// through the terminator and install a module end to end.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCa, issueCert } from '../../src/localstack/pki';
import { startTlsTerminator, type TlsTerminator } from '../../src/localstack/tls-terminator';
import { eventually, kymaInState, kymaObject, useKlm } from '../support/klm';
import { processEnv, startNode } from '../support/processes';
import { stackInfo, uniqueName } from '../support/stack';

describe('Temporal over mTLS', () => {
  let dir: string;
  let terminator: TlsTerminator;
  let files: { ca: string; cert: string; key: string };
  const processes: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'klm-temporal-tls-'));
    const { caCert } = await generateCa(dir, 'temporal-ca');
    const server = await issueCert(dir, 'server', 'temporal', {
      serverAuth: true,
      sans: ['IP:127.0.0.1', 'DNS:localhost'],
    });
    const client = await issueCert(dir, 'client', 'klm', { clientAuth: true });
    files = { ca: caCert, cert: client.cert, key: client.key };
    terminator = await startTlsTerminator({
      backend: stackInfo().temporalAddress,
      cert: server.cert,
      key: server.key,
      clientCa: caCert,
    });
  });

  // The test's own bridge and client talk to the dev server directly; the worker under test does not.
  const klm = useKlm({ worker: false });

  afterAll(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await terminator?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Only the SDK's environment settings: the terminator's address, its CA, the client certificate. */
  function tlsEnv(): NodeJS.ProcessEnv {
    const { TEMPORAL_API_KEY: _k, ...env } = processEnv(klm(), {
      TEMPORAL_ADDRESS: terminator.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca,
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: files.key,
      KLM_METRICS_PORT: '',
    });
    return env;
  }

  function start(entry: string, env: NodeJS.ProcessEnv) {
    const started = startNode(['--import', 'tsx', entry], env);
    processes.push(started.proc);
    return started;
  }

  it('refuses a client without a certificate', async () => {
    const refused = terminator.refused;
    const err = await Connection.connect({
      address: terminator.address,
      tls: { serverRootCACertificate: await readFile(files.ca) },
      connectTimeout: 5000,
    })
      .then(
        async (c) => {
          // Some TLS 1.3 stacks fail only at the first call, once the server has read the (missing) certificate.
          await c.workflowService.getSystemInfo({});
          await c.close();
          return undefined;
        },
        (e: Error) => e,
      )
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(terminator.refused).toBeGreaterThan(refused);
  });

  it('runs the worker and the bridge through it with a client certificate: a module installs end to end', async () => {
    const env = { ...tlsEnv(), KLM_BLOB_CACHE_DIR: await mkdtemp(path.join(dir, 'blobs-')) };
    const worker = start('src/workers/main.ts', env);
    const bridge = start('src/starter/main.ts', env);
    await eventually(
      'the worker to poll through TLS',
      () => Promise.resolve(worker.out().includes('worker: task queue') || undefined),
      90_000,
    );
    await eventually(
      'the bridge to route through TLS',
      () => Promise.resolve(bridge.out().includes('bridge: routing events') || undefined),
      90_000,
    );
    expect(worker.out()).toContain(`on Temporal ${terminator.address} (TLS with a client certificate)`);
    expect(bridge.out()).toContain(`on Temporal ${terminator.address} (TLS with a client certificate)`);
    // Nothing of the client's key in what the processes print.
    const key = (await readFile(files.key, 'utf8')).split('\n').filter((l) => l && !l.startsWith('-----'));
    for (const line of key) expect(worker.out() + bridge.out()).not.toContain(line);

    const name = uniqueName('kyma');
    await klm().kube.create(kymaObject(klm().namespace, name, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    // Only the worker behind the terminator polls this task queue: Ready proves it worked through TLS.
    const kyma = await kymaInState(klm(), name, 'Ready', 120_000);
    expect(kyma.status?.modules?.[0]).toMatchObject({ name: 'greeter', state: 'Ready' });
    expect(terminator.accepted).toBeGreaterThanOrEqual(2);
    expect(worker.proc.exitCode).toBeNull();
    expect(bridge.proc.exitCode).toBeNull();
  });
});
