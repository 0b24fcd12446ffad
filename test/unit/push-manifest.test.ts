// pushManifest asks again when the registry calls a blob it was just given unknown (another push of
// the same content is rewriting the repository's link to it), and only then; it gives up, saying
// what the registry said, when the registry goes on calling the blob unknown.
import { describe, expect, it } from 'vitest';
import { OciRegistryClient } from '../../src/oci/registry-client';
import type { HttpResponse, RegistryRequest, RegistryTransport } from '../../src/oci/registry-transport';
import { ociFailure } from '../support/oci-failure';

/** What the distribution registry answered (test/integration/registry.test.ts has it do so). */
const BLOB_UNKNOWN = JSON.stringify({
  errors: [
    { code: 'DIGEST_INVALID', message: 'provided digest did not match uploaded content' },
    { code: 'MANIFEST_BLOB_UNKNOWN', message: 'blob unknown to registry', detail: 'sha256:f1' },
  ],
});

/** A transport that answers manifest uploads from `answers` in turn, and counts them. */
function answering(answers: { status: number; body: string }[]) {
  const sent: RegistryRequest[] = [];
  const transport: RegistryTransport = {
    baseUrl: () => 'http://reg.test',
    send: (_endpoint, req) => {
      sent.push(req);
      const a = answers[Math.min(sent.length, answers.length) - 1]!;
      return Promise.resolve({ status: a.status, text: () => Promise.resolve(a.body) } as unknown as HttpResponse);
    },
  };
  return { client: new OciRegistryClient('reg.test', transport), sent };
}

describe('pushManifest', () => {
  it('sends the manifest again while the registry calls one of its blobs unknown', async () => {
    const { client, sent } = answering([
      { status: 400, body: BLOB_UNKNOWN },
      { status: 400, body: BLOB_UNKNOWN },
      { status: 201, body: '' },
    ]);
    await expect(client.pushManifest('component-descriptors/m', '1.0.0', { schemaVersion: 2 })).resolves.toMatch(
      /^sha256:/,
    );
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(
      Array(3).fill('PUT /v2/component-descriptors/m/manifests/1.0.0'),
    );
  });

  it('gives up after five tries and says what the registry said', async () => {
    const { client, sent } = answering([{ status: 400, body: BLOB_UNKNOWN }]);
    const err = await ociFailure(client.pushManifest('component-descriptors/m', '1.0.0', { schemaVersion: 2 }));
    expect(sent).toHaveLength(5);
    expect(err.reason).toBe('RegistryError');
    expect(err.message).toContain('registry refused manifest component-descriptors/m:1.0.0: HTTP 400');
    expect(err.message).toContain('MANIFEST_BLOB_UNKNOWN');
  });

  it('does not ask again when the registry refuses the manifest for anything else', async () => {
    const { client, sent } = answering([{ status: 400, body: '{"errors":[{"code":"MANIFEST_INVALID"}]}' }]);
    const err = await ociFailure(client.pushManifest('component-descriptors/m', '1.0.0', { schemaVersion: 2 }));
    expect(sent).toHaveLength(1);
    expect(err.message).toContain('MANIFEST_INVALID');
  });
});
