// README's quick start as a newcomer follows it: the lines of its marked block, as they stand, in a
// fresh clone of this repository (its HEAD). `npm start` runs in the background until it says it
// is running; the `export …` lines it printed are pasted before the block's other lines, which run
// in one shell; then its worker is killed (and restarted), and npm is sent SIGTERM, as a supervisor
// or `kill` stops it. The clone shares this checkout's node_modules (a symlink; its lock
// file gets this checkout's time, so that the dependency check decides as it does here) and the
// servers' cache, so only `klm`'s first build (dist/) and the stack's start are paid for.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, stat, symlink, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/klm';

const exec = promisify(execFile);

/** The commands of README's quick start: its marked block, without comments and blank lines. */
function quickStartLines(readme: string): string[] {
  const block = /<!-- quick-start[^>]*-->\n```sh\n([\s\S]*?)```\n<!-- \/quick-start -->/.exec(readme);
  if (!block) throw new Error('README.md has no marked quick-start block');
  return block[1]!
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter((l) => l !== '');
}

/** The processes under `pid` (children, theirs, …), from /proc. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid …: comm may hold spaces and parentheses, the last ")" ends it.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (let next = [pid]; next.length;) {
    const children = [...parent].filter(([, p]) => next.includes(p)).map(([c]) => c);
    found.push(...children);
    next = children;
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The environment of a newcomer's shell: none of this run's cluster or Temporal settings. */
function newcomerEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(KUBECONFIG|TEMPORAL_|KLM_|NODE_OPTIONS$|VITEST|npm_)/.test(k)),
  );
  return { ...env, DOCKER_CONFIG: '/nonexistent/klm-tests-docker-config' };
}

describe("README's quick start, in a fresh clone", () => {
  const lines = quickStartLines(readFileSync('README.md', 'utf8'));
  let dir = '';
  let clone = '';
  let start: ChildProcess | undefined;
  let out = '';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'klm-quick-start-'));
    clone = path.join(dir, 'klm-temporal');
    await exec('git', ['clone', '-q', process.cwd(), clone]);
    await symlink(path.resolve('node_modules'), path.join(clone, 'node_modules'));
    const lock = await stat('package-lock.json');
    await utimes(path.join(clone, 'package-lock.json'), lock.atime, lock.mtime);
  });

  /** Whether npm start has ended (npm ends by the signal it was sent, so with no exit code). */
  const ended = () => start !== undefined && (start.exitCode !== null || start.signalCode !== null);

  afterAll(async () => {
    if (start?.pid && !ended()) process.kill(-start.pid, 'SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'starts with `npm start`, then lists and adds modules with the defaults; restarts a worker that dies; stops on SIGTERM',
    { timeout: 420_000 },
    async () => {
      expect(lines[0]).toBe('npm start');
      const [command, ...args] = lines[0]!.split(' ');
      // A process group of its own, as a terminal's job (what might be left of it is killed at the end).
      start = spawn(command!, args, {
        cwd: clone,
        env: newcomerEnv(),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      start.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      start.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      await eventually(
        'npm start to be running',
        () => {
          if (ended()) throw new Error(`npm start ended:\n${out}`);
          return Promise.resolve(out.includes('Press Ctrl-C to stop.') || undefined);
        },
        150_000,
      );
      const paste = out.split('\n').filter((l) => /^\s*export /.test(l));
      expect(paste.join('\n')).toMatch(/export KUBECONFIG=\S+ TEMPORAL_ADDRESS=\S+/);

      const script = ['set -e', ...paste.map((l) => l.trim()), ...lines.slice(1)].join('\n');
      const { stdout, stderr } = await exec('bash', ['-c', script], {
        cwd: clone,
        env: newcomerEnv(),
        timeout: 150_000,
      });
      // The first call in the clone builds dist/ and says so; the defaults find kyma-system/default.
      expect(stderr).toContain('klm: building dist/');
      expect(stderr).not.toContain('there is no Kyma');
      expect(stdout).toMatch(/greeter\s+1\.0\.0\(regular\)\s+CreateAndDelete\s+true\s+Ready\s+Ready/);

      // npm run klm: the dependency check, the built klm, nothing of npm's on stdout.
      const json = await exec(
        'bash',
        ['-c', `${paste.map((l) => l.trim()).join('\n')}\nnpm run klm -- module list -o json`],
        {
          cwd: clone,
          env: newcomerEnv(),
        },
      );
      expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ name: 'greeter', moduleStatus: 'Ready' })]);
      expect(json.stderr).not.toContain('building');

      // The worker dies: the stack says why, with its last log lines, and starts it again; Kymas
      // are reconciled as before.
      const stackDir = /logs and data: +(\S+)/.exec(out)?.[1];
      const workerPid = Number(readFileSync(path.join(stackDir!, 'worker.pid'), 'utf8'));
      expect(descendants(start.pid!)).toContain(workerPid);
      process.kill(workerPid, 'SIGKILL');
      await eventually(
        'the worker to be restarted',
        () => Promise.resolve(out.includes('[stack] worker is up again after restart 1') || undefined),
        150_000,
      );
      expect(out).toContain(
        `[stack] worker exited unexpectedly (killed by SIGKILL, code 137); restarting it in 1s (restart 1 of at most 5 within 2 min). ` +
          `Last log lines (${path.join(stackDir!, 'worker.log')}):`,
      );
      const add = await exec(
        'bash',
        ['-c', `${paste.map((l) => l.trim()).join('\n')}\nnpx klm module add counter --wait --timeout 2m`],
        { cwd: clone, env: newcomerEnv() },
      );
      expect(add.stdout).toContain('module counter is Ready');

      // A supervisor stops it as `kill` does: SIGTERM to npm's own process, which stops every process it started.
      const tree = descendants(start.pid!);
      expect(tree.length).toBeGreaterThan(10);
      process.kill(start.pid!, 'SIGTERM');
      await eventually(
        'npm start and every process under it to stop on SIGTERM',
        () => Promise.resolve((ended() && !tree.some(alive)) || undefined),
        60_000,
      );
      expect(out).toContain('SIGTERM: stopping');
    },
  );

  it('never runs a build older than the sources: a source changed, klm builds again and says so', async () => {
    const now = new Date();
    await utimes(path.join(clone, 'src/cli/output.ts'), now, now);
    const { stdout, stderr } = await exec('npx', ['klm', '--help'], { cwd: clone, env: newcomerEnv() });
    expect(stderr).toContain('klm: building dist/ (a source changed since the last build)');
    expect(stdout).toContain('Usage: klm');
    const again = await exec('npx', ['klm', '--help'], { cwd: clone, env: newcomerEnv() });
    expect(again.stderr).toBe('');
  });
});
