// kwok simulates kubelets: it keeps fake nodes Ready (with a node lease) and moves scheduled
// pods to Running/Ready, so that Deployments in the local cluster become Available without
// running any container. The stages it applies are in kwok-stages.yaml beside this file (a pod
// labelled `simulate: crash-loop` plays a container that keeps crashing there).
import { copyFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { freePort } from './ports';
import { startProcess, waitUntil, type ManagedProcess } from './process';
import { supervise } from './supervise';

export const KWOK_NODE_NAME = 'kwok-node-0';

/** The stages, by a path that holds from src/localstack and from the bundled dist/cli alike (same depth). */
const STAGES = fileURLToPath(new URL('../../src/localstack/kwok-stages.yaml', import.meta.url));

/** The fake node kwok keeps Ready; pods are scheduled onto it by kube-scheduler. */
export const KWOK_NODE = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: KWOK_NODE_NAME,
    annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    labels: {
      'kubernetes.io/hostname': KWOK_NODE_NAME,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      type: 'kwok',
    },
  },
  spec: {},
};

export async function startKwok(binary: string, dir: string, kubeconfig: string): Promise<ManagedProcess> {
  const config = path.join(dir, 'kwok-stages.yaml');
  await copyFile(STAGES, config);
  const port = await freePort();
  const spawn = () =>
    startProcess(
      'kwok',
      binary,
      [
        `--kubeconfig=${kubeconfig}`,
        `--config=${config}`,
        '--manage-all-nodes=true',
        '--node-lease-duration-seconds=40',
        '--cidr=10.244.0.0/16',
        '--node-ip=10.1.0.1',
        `--server-address=127.0.0.1:${port}`,
      ],
      { logFile: path.join(dir, 'kwok.log'), env: { ...process.env, HOME: dir } },
    );
  return await supervise(spawn, (p) =>
    waitUntil(p, 'serving', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok),
  );
}
