// klm as users run it: a process of its own, its stdin not a terminal.
import { spawn } from 'node:child_process';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The command from the sources (through tsx), or the built one (`dist/cli/klm.js`, plain node). */
export type KlmEntry = 'source' | 'dist';

/**
 * `klm <args>`; `env` adds settings (Temporal, the task queue, a registry). No Docker config
 * unless `env` names one: the credentials of whoever runs the tests stay out of them.
 */
export function klmCli(args: string[], env: NodeJS.ProcessEnv = {}, entry: KlmEntry = 'source'): Promise<Ran> {
  const command = entry === 'dist' ? ['dist/cli/klm.js'] : ['--import', 'tsx', 'src/cli/klm.ts'];
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...command, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, DOCKER_CONFIG: '/nonexistent/klm-tests-docker-config', ...(entry === 'dist' ? { NODE_OPTIONS: '' } : {}), ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdin.end();
    p.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
