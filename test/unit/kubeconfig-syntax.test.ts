// A kubeconfig file that is not YAML: the parser's message quotes the lines around the error, a
// token among them; what klm says names only the file and where the error is (klm's --kubeconfig,
// KUBECONFIG, and a target cluster's Secret all read through src/k8s/kubeconfig.ts).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultKubeConfig, kubeConfigFromFile, KubeconfigSyntaxError } from '../../src/k8s/kubeconfig';

const MARKER = 'SECRET-MARKER-kubeconfig-token';
const BROKEN = `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: ${MARKER}\n    bad: [unclosed\n`;

async function brokenFile(): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'klm-kc-')), 'config');
  await writeFile(file, BROKEN);
  return file;
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('nothing was thrown');
}

describe('a kubeconfig that is not YAML', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is named with the place of the error, never with the lines around it (--kubeconfig)', async () => {
    const file = await brokenFile();
    const err = thrown(() => kubeConfigFromFile(file));
    expect(err).toBeInstanceOf(KubeconfigSyntaxError);
    expect(err.message).toBe(`the kubeconfig ${file} is not YAML a kubeconfig can be read from (line 8, column 1)`);
    expect(`${err.stack} ${String(err.cause)}`).not.toContain(MARKER);
  });

  it('is named so where KUBECONFIG names it', async () => {
    const file = await brokenFile();
    // client-node reads KUBECONFIG from the process's environment.
    vi.stubEnv('KUBECONFIG', file);
    const err = thrown(() => defaultKubeConfig());
    expect(err.message).toBe(`the kubeconfig ${file} is not YAML a kubeconfig can be read from (line 8, column 1)`);
    expect(`${err.stack} ${String(err.cause)}`).not.toContain(MARKER);
  });

  it('that cannot be read at all says so by its path alone', () => {
    expect(() => kubeConfigFromFile('/nonexistent/klm/config')).toThrow(/ENOENT.*\/nonexistent\/klm\/config/);
  });
});
