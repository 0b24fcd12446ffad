// A kubeconfig Secret that cannot be read: the error says where, and never quotes what it holds.
import { describe, expect, it } from 'vitest';
import { clientFromSecret, TargetClusterError } from '../../src/k8s/target-cluster';

const MARKER = 'SECRET-MARKER-7f3a9c';

function secret(config: string) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kc', namespace: 'kcp' }, data: { config: Buffer.from(config).toString('base64') } };
}

describe('clientFromSecret', () => {
  it.each([
    ['broken YAML next to a token', `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${MARKER}\n  : [unclosed\n`],
    ['a token where a mapping belongs', `clusters: ${MARKER}: x: y\n`],
  ])('refuses %s without quoting it', async (_what, config) => {
    const err = await clientFromSecret(secret(config)).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(TargetClusterError);
    expect((err as Error).message).toContain('Secret kcp/kc does not hold a valid kubeconfig');
    expect((err as Error).message).not.toContain(MARKER);
  });

  it('refuses a kubeconfig that runs a command for its credential when the installation forbids it', async () => {
    const config = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`;
    const err = await clientFromSecret(secret(config), { allowExec: false }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(TargetClusterError);
    expect((err as Error).message).toBe('Secret kcp/kc: its kubeconfig runs a command for its credential (exec or an auth provider\'s cmd-path), which this installation forbids (KLM_KUBECONFIG_EXEC=deny)');
  });
});
