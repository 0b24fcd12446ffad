import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { freePorts } from './ports';
import { startProcess, waitUntil, type ManagedProcess } from './process';
import { supervise } from './supervise';

export interface Etcd {
  url: string;
  process: ManagedProcess;
}

export async function startEtcd(binary: string, dir: string): Promise<Etcd> {
  const [client, peer] = await freePorts(2);
  const data = path.join(dir, 'etcd-data');
  await mkdir(data, { recursive: true });
  const url = `http://127.0.0.1:${client}`;
  const spawn = () =>
    startProcess(
      'etcd',
      binary,
      [
        '--name=local',
        `--data-dir=${data}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=local=http://127.0.0.1:${peer}`,
        // A local, disposable store: skip fsync so that a fleet of objects is cheap to write.
        '--unsafe-no-fsync',
        '--quota-backend-bytes=4294967296',
        '--log-level=warn',
      ],
      { logFile: path.join(dir, 'etcd.log') },
    );
  const proc = await supervise(spawn, (p) => waitUntil(p, 'healthy', async () => (await fetch(`${url}/health`)).ok));
  return { url, process: proc };
}
