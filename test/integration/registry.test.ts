import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Digest, type OciRegistryClient } from '../../src/oci/registry-client';
import { pushModuleVersion } from '../../src/publish/module';
import { Registries } from '../../src/oci/registries';
import { ociFailure } from '../support/oci-failure';
import { stackInfo, uniqueName } from '../support/stack';

function client(): OciRegistryClient {
  return Registries.unconfigured().client(stackInfo().registryHost);
}

describe('the OCI registry client against the local registry', () => {
  it('pushes a blob and pulls it back with its sha256 verified', async () => {
    const repo = `modules/${uniqueName('blob')}`;
    const data = Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sample\n');
    const digest = await client().pushBlob(repo, data);
    expect(digest).toBe(sha256Digest(data));
    expect((await client().pullBlob(repo, digest)).equals(data)).toBe(true);
  });

  it('refuses to upload a blob under a digest that does not match its content', async () => {
    const repo = `modules/${uniqueName('blob')}`;
    const wrong = sha256Digest(Buffer.from('something else'));
    const err = await ociFailure(client().pushBlob(repo, Buffer.from('real content'), wrong));
    expect(err.reason).toBe('DigestMismatch');
    expect((await ociFailure(client().pullBlob(repo, wrong))).reason).toBe('BlobNotFound');
  });

  it('refuses a blob whose stored content no longer matches its digest', async () => {
    const repo = `modules/${uniqueName('blob')}`;
    const data = Buffer.from('kind: Namespace\n');
    const digest = await client().pushBlob(repo, data);
    // Tamper with the registry's storage behind its back.
    const hex = digest.slice('sha256:'.length);
    const file = path.join(
      stackInfo().dir,
      'registry-data',
      'docker/registry/v2/blobs/sha256',
      hex.slice(0, 2),
      hex,
      'data',
    );
    expect((await readFile(file)).equals(data)).toBe(true);
    await writeFile(file, 'kind: Tampered\n');
    const err = await ociFailure(client().pullBlob(repo, digest));
    expect(err.reason).toBe('DigestMismatch');
    expect(err.message).toContain(digest);
  });

  it('reports a missing blob as BlobNotFound', async () => {
    const err = await ociFailure(
      client().pullBlob(`modules/${uniqueName('none')}`, sha256Digest(Buffer.from('absent'))),
    );
    expect(err.reason).toBe('BlobNotFound');
  });

  // Two pipelines (or two test files) may publish the same content at once. The registry rewrites
  // a repository's link to a blob on every upload of it, and a manifest that names the blob while
  // the link is being rewritten is refused as naming an unknown blob.
  it('publishes one module version from several publishers at once', async () => {
    for (let round = 0; round < 5; round++) {
      const module = {
        name: 'concurrent',
        component: `kyma-project.io/module/${uniqueName('concurrent')}`,
        version: '1.0.0',
        manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: concurrent\n',
        descriptor: 'empty' as const,
        layer: 'tar' as const,
      };
      const pushes = Array.from({ length: 6 }, () => pushModuleVersion(stackInfo().registryHost, module, client()));
      const results = await Promise.allSettled(pushes);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    }
  });
});
