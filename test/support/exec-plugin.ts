// An exec credential plugin for tests: a Node script in a directory of its own that counts its
// runs, so that the n-th run can hand out the n-th credential, and prints an ExecCredential whose
// status is the JavaScript expression `status` (of `n` and `dir`). With HANG in its environment a
// run hangs past any limit (3 s) and goes away without an answer or a count; with FAIL it fails,
// printing a marker on stderr.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface ExecPlugin {
  /** The plugin's directory (its script, its count; a test may put what `status` reads here). */
  dir: string;
  /** A kubeconfig user that runs the plugin, with `env`. */
  user(env?: { name: string; value: string }[]): Record<string, unknown>;
  /** How often it handed out (or failed to hand out) a credential. */
  runs(): Promise<number>;
}

export async function execPlugin(status: string): Promise<ExecPlugin> {
  const dir = await mkdtemp(path.join(tmpdir(), 'klm-exec-'));
  const script = path.join(dir, 'plugin.mjs');
  const count = path.join(dir, 'count');
  await writeFile(count, '');
  await writeFile(
    script,
    `import { appendFileSync, readFileSync } from 'node:fs';
const dir = ${JSON.stringify(dir)};
if (process.env.HANG) setTimeout(() => {}, 3000);
else {
  appendFileSync(${JSON.stringify(count)}, 'x');
  const n = readFileSync(${JSON.stringify(count)}, 'utf8').length;
  if (process.env.FAIL) { process.stderr.write('SECRET-MARKER-in-stderr'); process.exit(3); }
  const status = ${status};
  process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
}
`,
  );
  return {
    dir,
    user: (env = []) => ({
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [script],
        env,
        interactiveMode: 'Never',
      },
    }),
    runs: async () => (await readFile(count, 'utf8')).length,
  };
}
