// Moving a control plane over from upstream's lifecycle-manager: its CRDs had v1beta1 as well
// (status.storedVersions [v1beta1, v1beta2], objects in etcd from v1beta1's time), ours serve
// v1beta2 only. On an API server of its own (the shared etcd, a prefix of its own): the documented
// order (docs/operator/moving-from-upstream.md) migrates what etcd holds and lets our CRDs
// apply, where applying them first is refused.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/shared';
import { loadCrds, type Crd } from '../../src/k8s/crds';
import { startApiServer, type ApiServer } from '../../src/localstack/kube';
import { pkiIn } from '../../src/localstack/pki';
import { kymaObject } from '../support/klm';
import { stackInfo } from '../support/stack';

const exec = promisify(execFile);
const NAMESPACE = 'kcp-system';

/** Our CRD as upstream's clusters have it: v1beta1 beside v1beta2, `storage` the one named. */
function upstreamCrd(crd: Crd, storage: 'v1beta1' | 'v1beta2'): Crd {
  const [v1beta2] = crd.spec.versions;
  return {
    ...crd,
    spec: {
      ...crd.spec,
      versions: [
        { ...v1beta2!, name: 'v1beta1', storage: storage === 'v1beta1', deprecated: true },
        { ...v1beta2!, storage: storage === 'v1beta2' },
      ],
    },
  };
}

describe('storedVersions: a control plane moved over from upstream', () => {
  const info = stackInfo();
  let api: ApiServer;
  let dir: string;
  let prefix: string;

  async function kubectl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
    return (
      await exec(info.tools.kubectl, args, {
        env: { ...process.env, KUBECONFIG: api.kubeconfig, ...env },
        maxBuffer: 16 * 1024 * 1024,
      })
    ).stdout;
  }

  /** Writes objects to a file and applies them as upstream's installation did: client-side kubectl apply. */
  async function applyClientSide(name: string, objects: object[]): Promise<void> {
    const file = path.join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    await kubectl(['apply', '-f', file]);
  }

  /** The apiVersion etcd holds a Kyma at, read from etcd itself (the gRPC gateway). */
  async function storedAs(name: string): Promise<string> {
    const key = Buffer.from(`${prefix}/operator.kyma-project.io/kymas/${NAMESPACE}/${name}`).toString('base64');
    const res = await fetch(`${info.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key }) });
    const { kvs } = (await res.json()) as { kvs?: { value: string }[] };
    return (JSON.parse(Buffer.from(kvs![0]!.value, 'base64').toString()) as KubeObject).apiVersion;
  }

  async function storedVersions(): Promise<Record<string, string[]>> {
    const list = JSON.parse(await kubectl(['get', 'crd', '-o', 'json'])) as { items: Crd[] };
    return Object.fromEntries(list.items.map((c) => [c.metadata.name, c.status?.storedVersions ?? []]));
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'klm-stored-versions-'));
    prefix = `/${path.basename(dir)}`;
    api = await startApiServer(info.tools.kubeApiserver, dir, info.etcdUrl, pkiIn(info.pkiDir), prefix, {
      supervised: false,
    });
  });
  afterAll(async () => {
    await api?.process.stop();
  });

  it('migrates objects stored as v1beta1 and the CRDs stored versions, after which our CRDs apply', async () => {
    const ours = await loadCrds();
    // Upstream's history: v1beta1 stored first, objects written then; v1beta2 the storage version later.
    await applyClientSide(
      'upstream-old',
      ours.map((c) => upstreamCrd(c, 'v1beta1')),
    );
    await kubectl(['wait', '--for=condition=Established', 'crd', '--all']);
    await kubectl(['create', 'namespace', NAMESPACE]);
    const old = ['kyma-old-1', 'kyma-old-2'];
    await applyClientSide(
      'kymas-old',
      old.map((n) => ({
        ...kymaObject(NAMESPACE, n, { channel: 'regular', modules: [] }),
        apiVersion: 'operator.kyma-project.io/v1beta1',
      })),
    );
    await applyClientSide(
      'upstream',
      ours.map((c) => upstreamCrd(c, 'v1beta2')),
    );
    await applyClientSide('kymas-new', [kymaObject(NAMESPACE, 'kyma-new', { channel: 'fast', modules: [] })]);
    expect((await storedVersions())['kymas.operator.kyma-project.io']).toEqual(['v1beta1', 'v1beta2']);
    expect(await Promise.all([...old, 'kyma-new'].map(storedAs))).toEqual([
      'operator.kyma-project.io/v1beta1',
      'operator.kyma-project.io/v1beta1',
      'operator.kyma-project.io/v1beta2',
    ]);

    // Our CRDs first: refused, v1beta1 being still in storedVersions.
    const early = await kubectl(['apply', '--server-side', '--force-conflicts', '-k', 'deploy/crds']).catch(
      (e: { stderr?: string }) => e.stderr ?? 'failed',
    );
    expect(early).toMatch(/storedVersions/);

    // The documented order: the migration, then our CRDs.
    const { stdout } = await exec('deploy/crds/migrate-stored-versions.sh', [], {
      env: { ...process.env, KUBECONFIG: api.kubeconfig, KUBECTL: info.tools.kubectl },
    });
    expect(stdout).toContain('kymas.operator.kyma-project.io: 3 objects written at v1beta2, stored versions [v1beta2]');
    expect(await Promise.all([...old, 'kyma-new'].map(storedAs))).toEqual(
      Array(3).fill('operator.kyma-project.io/v1beta2'),
    );
    await kubectl(['apply', '--server-side', '--force-conflicts', '-k', 'deploy/crds']);
    const after = JSON.parse(await kubectl(['get', 'crd', '-o', 'json'])) as { items: Crd[] };
    for (const crd of after.items) {
      expect(
        crd.spec.versions.map((v) => v.name),
        crd.metadata.name,
      ).toEqual(['v1beta2']);
      expect(crd.status?.storedVersions, crd.metadata.name).toEqual(['v1beta2']);
    }
    // The objects read back as they were written.
    const kymas = JSON.parse(await kubectl(['get', 'kymas', '-n', NAMESPACE, '-o', 'json'])) as {
      items: (KubeObject & { spec: { channel: string } })[];
    };
    expect(kymas.items.map((k) => `${k.apiVersion} ${k.metadata.name} ${k.spec.channel}`).sort()).toEqual([
      'operator.kyma-project.io/v1beta2 kyma-new fast',
      'operator.kyma-project.io/v1beta2 kyma-old-1 regular',
      'operator.kyma-project.io/v1beta2 kyma-old-2 regular',
    ]);
  });
});
