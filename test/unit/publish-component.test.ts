// pushComponent lays a component version out as the OCM tooling does, and what reads it back
// (src/oci/ocm.ts) finds its descriptor and local blobs; componentVersionExists tells a missing
// version from a registry that fails.
import { describe, expect, it } from 'vitest';
import { configuredComponentLocation, pullDescriptor, rawManifestResource } from '../../src/oci/ocm';
import { OciError, sha256Digest, type OciRegistryClient } from '../../src/oci/registry-client';
import { readLayer, tarOneFile } from '../../src/oci/tar';
import { componentVersionExists, pushComponent } from '../../src/publish/component';

/** An in-memory registry with the client methods publishing and reading use. */
function memoryRegistry(getManifestError?: OciError) {
  const blobs = new Map<string, Buffer>();
  const manifests = new Map<string, unknown>();
  const client = {
    pushBlob: (repository: string, data: Buffer) => {
      const digest = sha256Digest(data);
      blobs.set(`${repository}@${digest}`, data);
      return Promise.resolve(digest);
    },
    pushManifest: (repository: string, tag: string, manifest: unknown) => {
      manifests.set(`${repository}:${tag}`, manifest);
      return Promise.resolve('sha256:x');
    },
    getManifest: (repository: string, tag: string) => {
      if (getManifestError) return Promise.reject(getManifestError);
      const m = manifests.get(`${repository}:${tag}`);
      return m
        ? Promise.resolve(m)
        : Promise.reject(new OciError('BlobNotFound', `manifest ${repository}:${tag} not found`));
    },
    pullBlob: (repository: string, digest: string) => Promise.resolve(blobs.get(`${repository}@${digest}`)!),
  };
  return { client: client as unknown as OciRegistryClient, manifests };
}

describe('pushComponent', () => {
  it('pushes descriptor, labels and local blobs under the subpath, where the lifecycle manager looks', async () => {
    const { client, manifests } = memoryRegistry();
    const to = { host: 'reg.example.io', subPath: '/modules/' };
    const manifestTar = tarOneFile('manifest.yaml', Buffer.from('kind: A\n'));
    const crTar = tarOneFile('cr.yaml', Buffer.from('kind: B\n'));
    await pushComponent(
      to,
      {
        name: 'kyma-project.io/module/demo',
        version: '1.0.0',
        labels: [{ name: 'operator.kyma-project.io/beta', value: 'false', version: 'v1' }],
        resources: [
          { name: 'raw-manifest', type: 'directoryTree', mediaType: 'application/x-tar', blob: manifestTar },
          { name: 'default-cr', type: 'directoryTree', mediaType: 'application/x-tar', blob: crTar },
        ],
      },
      client,
    );
    expect([...manifests.keys()]).toEqual(['modules/component-descriptors/kyma-project.io/module/demo:1.0.0']);
    const manifest = manifests.values().next().value as {
      layers: { mediaType: string; digest: string; annotations?: Record<string, string> }[];
    };
    expect(manifest.layers.map((l) => l.mediaType)).toEqual([
      'application/vnd.ocm.software.component-descriptor.v2+yaml+tar',
      'application/x-tar',
      'application/x-tar',
    ]);
    expect(manifest.layers[2]!.annotations).toEqual({
      'software.ocm.artifact': '[{"kind":"resource","identity":{"name":"default-cr"}}]',
    });

    const loc = configuredComponentLocation(
      { host: 'reg.example.io', subPath: 'modules' },
      'kyma-project.io/module/demo',
      '1.0.0',
      'test',
    );
    const descriptor = (await pullDescriptor(client, loc)) as { component: Record<string, unknown> };
    expect(descriptor.component).toMatchObject({
      name: 'kyma-project.io/module/demo',
      version: '1.0.0',
      provider: 'kyma-project.io',
      labels: [{ name: 'operator.kyma-project.io/beta', value: 'false', version: 'v1' }],
      repositoryContexts: [
        { type: 'OCIRegistry', baseUrl: 'reg.example.io', subPath: 'modules', componentNameMapping: 'urlPath' },
      ],
    });
    expect(
      (descriptor.component.resources as { name: string; relation: string }[]).map((r) => [r.name, r.relation]),
    ).toEqual([
      ['raw-manifest', 'local'],
      ['default-cr', 'local'],
    ]);
    const res = rawManifestResource(descriptor, loc, 'test');
    expect(res).toMatchObject({
      digest: sha256Digest(manifestTar),
      mediaType: 'application/x-tar',
      repository: loc.repository,
    });
    expect(readLayer(await client.pullBlob(res.repository, res.digest), 'test').text).toBe('kind: A\n');
  });
});

describe('componentVersionExists', () => {
  it('is true for a pushed version, false for another, and passes on other registry failures', async () => {
    const { client } = memoryRegistry();
    const to = { host: 'reg.example.io' };
    await pushComponent(
      to,
      { name: 'kyma-project.io/module/demo', version: '1.0.0', labels: [], resources: [] },
      client,
    );
    expect(await componentVersionExists(to, 'kyma-project.io/module/demo', '1.0.0', client)).toBe(true);
    expect(await componentVersionExists(to, 'kyma-project.io/module/demo', '1.0.1', client)).toBe(false);
    const refused = new OciError('RegistryCredentialsRefused', 'refused');
    await expect(
      componentVersionExists(to, 'kyma-project.io/module/demo', '1.0.0', memoryRegistry(refused).client),
    ).rejects.toBe(refused);
  });
});
