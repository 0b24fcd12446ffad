// klm as users run it: a process of its own, its stdin not a terminal. From the sources it is
// bundled once per test process with esbuild, as the production build compiles it
// (scripts/esbuild-node.mjs), and run with plain node: a command then starts in a fraction of the time
// tsx takes to compile it anew for every run.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { nodeBundle } from '../../scripts/esbuild-node.mjs';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The command from the sources, or the built one (`dist/cli/klm.js`, by `npm run build`). */
export type KlmEntry = 'source' | 'dist';

let bundled: Promise<string> | undefined;

/** The sources' klm bundled under node_modules, so that its imports of npm packages resolve. */
function sourceEntry(): Promise<string> {
  return (bundled ??= (async () => {
    const dir = path.resolve('node_modules/.cache/klm-tests');
    mkdirSync(dir, { recursive: true });
    const outfile = path.join(dir, `klm-${process.pid}.mjs`);
    await build({
      entryPoints: ['src/cli/klm.ts'],
      outfile,
      ...nodeBundle,
      logLevel: 'warning',
    });
    process.once('exit', () => rmSync(outfile, { force: true }));
    return outfile;
  })());
}

/**
 * `klm <args>`; `env` adds settings (Temporal, the task queue, a registry). No Docker config
 * unless `env` names one: the credentials of whoever runs the tests stay out of them.
 */
export async function klmCli(args: string[], env: NodeJS.ProcessEnv = {}, entry: KlmEntry = 'source'): Promise<Ran> {
  const script = entry === 'dist' ? 'dist/cli/klm.js' : await sourceEntry();
  return await new Promise((resolve) => {
    const p = spawn(process.execPath, [script, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, DOCKER_CONFIG: '/nonexistent/klm-tests-docker-config', NODE_OPTIONS: '', ...env },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdin.end();
    p.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
