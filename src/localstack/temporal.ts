// The Temporal dev server (`temporal server start-dev`, Web UI included) on loopback ports,
// persisted in a SQLite file (WAL, no fsync), with the project's search attributes registered.
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../api/search-attributes';
import { missingSearchAttributes } from '../temporal/search-attributes';
import { freePorts } from './ports';
import { startProcess, waitUntil, type ManagedProcess } from './process';
import { supervise } from './supervise';

export interface TemporalServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  process: ManagedProcess;
}

export async function startTemporal(binary: string, dir: string, opts: { ui: boolean }): Promise<TemporalServer> {
  const [grpc, ui, http, metrics] = await freePorts(4);
  const namespace = 'default';
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(grpc),
    '--http-port',
    String(http),
    '--metrics-port',
    String(metrics),
    '--db-filename',
    path.join(dir, 'temporal.sqlite'),
    // A write-ahead log without an fsync per transaction: SQLite otherwise spends most of the
    // server's time waiting for the disk. Data survives any crash of the processes (the OS
    // holds the pages); only a crash of the machine itself could lose the last writes.
    '--sqlite-pragma',
    'journal_mode=wal',
    '--sqlite-pragma',
    'synchronous=off',
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    // Whether a replaced worker version still has open pinned runs (drained): checked every 5 s
    // here, not the server's 3 minutes, so that `klm deployment status` tells it soon.
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusRefreshInterval="5s"',
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"',
    ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([k, t]) => ['--search-attribute', `${k}=${t}`]),
    ...(opts.ui ? ['--ui-ip', '127.0.0.1', '--ui-port', String(ui), '--ui-disable-news-fetch'] : ['--headless']),
  ];
  const address = `127.0.0.1:${grpc}`;
  // Restarted on the same ports and SQLite file when it dies, so that workflows survive.
  const proc = await supervise(
    () => startProcess('temporal', binary, args, { logFile: path.join(dir, 'temporal.log') }),
    (p) =>
      waitUntil(p, 'serving with the search attributes registered', async () => {
        const conn = await Connection.connect({ address, connectTimeout: 1000 });
        try {
          return (await missingSearchAttributes(conn, namespace)).length === 0;
        } finally {
          await conn.close();
        }
      }),
  );
  return { address, namespace, uiUrl: opts.ui ? `http://127.0.0.1:${ui}` : undefined, process: proc };
}
