// Builds the third-party servers the local stack runs (Temporal CLI, kube-apiserver & co,
// etcd, kwok) from their Go modules into a version-stamped cache outside the repository,
// and installs Debian's docker-registry. Only what is missing is built; with everything
// cached this takes well under a second.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { log } from './log';

export const TOOL_VERSIONS = {
  temporal: 'v1.8.2',
  // Pseudo-version of the commit tagged v1.8.2: the CLI's go.mod replaces its cliext module
  // with a local directory, which a wrapper module cannot follow.
  temporalCliext: 'v0.0.0-20260731000218-c579925f193f',
  kubernetes: 'v1.36.3',
  etcd: 'v3.6.16',
  kwok: 'v0.8.0',
} as const;

export type Profile = 'minimal' | 'full';

export interface ToolPaths {
  temporal: string;
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubectl: string;
  kwok: string;
  registry: string;
}

export function cacheRoot(): string {
  return (
    process.env.KLM_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'klm-temporal')
  );
}

function toolDir(name: string, version: string): string {
  return path.join(cacheRoot(), 'tools', `${name}-${version}`);
}

export function toolPaths(): ToolPaths {
  const v = TOOL_VERSIONS;
  const k8s = path.join(toolDir('kubernetes', v.kubernetes), 'bin');
  return {
    temporal: path.join(toolDir('temporal', v.temporal), 'bin', 'temporal'),
    etcd: path.join(toolDir('etcd', v.etcd), 'bin', 'etcd'),
    kubeApiserver: path.join(k8s, 'kube-apiserver'),
    kubeControllerManager: path.join(k8s, 'kube-controller-manager'),
    kubeScheduler: path.join(k8s, 'kube-scheduler'),
    kubectl: path.join(k8s, 'kubectl'),
    kwok: path.join(toolDir('kwok', v.kwok), 'bin', 'kwok'),
    registry: '/usr/bin/docker-registry',
  };
}

interface GoBuild {
  name: string;
  version: string;
  binaries: string[];
  /** Writes the wrapper module into `dir` and builds the binaries into `bin`. */
  build(dir: string, bin: string): Promise<void>;
}

function goEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOWORK: 'off' };
  delete env.GOFLAGS;
  return env;
}

function goBinary(): string {
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/** Runs `go` with the build environment; keeps the output and shows it only on failure. */
async function go(args: string[], cwd: string, label: string): Promise<string> {
  const started = Date.now();
  const heartbeat = setInterval(() => {
    log('tools', `${label}: still working (${Math.round((Date.now() - started) / 1000)}s)`);
  }, 20_000);
  try {
    return await new Promise<string>((resolve, reject) => {
      const child = spawn(goBinary(), args, { cwd, env: goEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', (err) =>
        reject(new Error(`cannot run the Go toolchain (${err.message}); install Go 1.26 or later`)),
      );
      child.on('close', (code) => {
        if (code === 0) resolve(out);
        else reject(new Error(`go ${args.join(' ')} failed (exit ${code}) in ${cwd}:\n${out.slice(-4000)}`));
      });
    });
  } finally {
    clearInterval(heartbeat);
  }
}

function goMod(module: string, require: string[], replace: string[]): string {
  return [
    `module ${module}`,
    '',
    'go 1.26',
    '',
    'require (',
    ...require.map((r) => `\t${r}`),
    ')',
    '',
    'replace (',
    ...replace.map((r) => `\t${r}`),
    ')',
    '',
  ].join('\n');
}

/** The staging modules k8s.io/kubernetes replaces with local directories, read from its go.mod. */
async function kubernetesStagingModules(dir: string, version: string): Promise<string[]> {
  const out = await go(['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], dir, 'kubernetes go.mod');
  const info = JSON.parse(out) as { GoMod?: string };
  if (!info.GoMod) throw new Error(`go mod download did not return the go.mod of k8s.io/kubernetes@${version}`);
  const mod = await readFile(info.GoMod, 'utf8');
  const staging = [...mod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\//gm)].map((m) => m[1]!);
  if (staging.length === 0) throw new Error(`no staging replacements found in k8s.io/kubernetes@${version}'s go.mod`);
  return staging;
}

const builds: Record<'temporal' | 'kubernetes' | 'etcd' | 'kwok', GoBuild> = {
  temporal: {
    name: 'temporal',
    version: TOOL_VERSIONS.temporal,
    binaries: ['temporal'],
    async build(dir, bin) {
      const v = TOOL_VERSIONS;
      await writeFile(
        path.join(dir, 'go.mod'),
        goMod(
          'klmtools/temporal',
          [`github.com/temporalio/cli ${v.temporal}`],
          [`github.com/temporalio/cli/cliext => github.com/temporalio/cli/cliext ${v.temporalCliext}`],
        ),
      );
      await go(['get', `github.com/temporalio/cli/cmd/temporal@${v.temporal}`], dir, 'temporal: resolving modules');
      await go(
        ['build', '-ldflags', '-s -w', '-o', bin + '/', 'github.com/temporalio/cli/cmd/temporal'],
        dir,
        'temporal: compiling',
      );
    },
  },
  kubernetes: {
    name: 'kubernetes',
    version: TOOL_VERSIONS.kubernetes,
    binaries: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'],
    async build(dir, bin) {
      const version = TOOL_VERSIONS.kubernetes;
      const [, minor] = version.slice(1).split('.');
      const stagingVersion = `v0.${version.slice(1).split('.').slice(1).join('.')}`;
      await writeFile(path.join(dir, 'go.mod'), goMod('klmtools/kubernetes', [`k8s.io/kubernetes ${version}`], []));
      const staging = await kubernetesStagingModules(dir, version);
      await writeFile(
        path.join(dir, 'go.mod'),
        goMod(
          'klmtools/kubernetes',
          [`k8s.io/kubernetes ${version}`],
          staging.map((m) => `${m} => ${m} ${stagingVersion}`),
        ),
      );
      const cmds = this.binaries.map((b) => `k8s.io/kubernetes/cmd/${b}`);
      await go(['get', ...cmds.map((c) => `${c}@${version}`)], dir, 'kubernetes: resolving modules');
      const ldflags = ['-s', '-w'];
      for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
        ldflags.push(
          `-X ${pkg}.gitVersion=${version}`,
          `-X ${pkg}.gitMajor=1`,
          `-X ${pkg}.gitMinor=${minor}`,
          `-X ${pkg}.gitTreeState=clean`,
        );
      }
      await go(['build', '-ldflags', ldflags.join(' '), '-o', bin + '/', ...cmds], dir, 'kubernetes: compiling');
    },
  },
  etcd: {
    name: 'etcd',
    version: TOOL_VERSIONS.etcd,
    binaries: ['etcd'],
    async build(dir, bin) {
      const v = TOOL_VERSIONS.etcd;
      // etcd's server module replaces its sibling modules with relative paths; pin them instead.
      const siblings = [
        'go.etcd.io/etcd/api/v3',
        'go.etcd.io/etcd/client/pkg/v3',
        'go.etcd.io/etcd/client/v3',
        'go.etcd.io/etcd/pkg/v3',
      ];
      await writeFile(
        path.join(dir, 'go.mod'),
        goMod(
          'klmtools/etcd',
          [`go.etcd.io/etcd/server/v3 ${v}`],
          siblings.map((m) => `${m} => ${m} ${v}`),
        ),
      );
      await go(['get', `go.etcd.io/etcd/server/v3@${v}`], dir, 'etcd: resolving modules');
      await go(
        ['build', '-ldflags', '-s -w', '-o', path.join(bin, 'etcd'), 'go.etcd.io/etcd/server/v3'],
        dir,
        'etcd: compiling',
      );
    },
  },
  kwok: {
    name: 'kwok',
    version: TOOL_VERSIONS.kwok,
    binaries: ['kwok'],
    async build(dir, bin) {
      await writeFile(path.join(dir, 'go.mod'), goMod('klmtools/kwok', [`sigs.k8s.io/kwok ${TOOL_VERSIONS.kwok}`], []));
      await go(['get', `sigs.k8s.io/kwok/cmd/kwok@${TOOL_VERSIONS.kwok}`], dir, 'kwok: resolving modules');
      await go(['build', '-ldflags', '-s -w', '-o', bin + '/', 'sigs.k8s.io/kwok/cmd/kwok'], dir, 'kwok: compiling');
    },
  },
};

async function ensureGoBuild(b: GoBuild): Promise<void> {
  const target = toolDir(b.name, b.version);
  if (b.binaries.every((x) => existsSync(path.join(target, 'bin', x)))) return;
  log('tools', `building ${b.name} ${b.version} from the Go module proxy (first time only; this takes minutes)`);
  const started = Date.now();
  await mkdir(path.join(cacheRoot(), 'tools'), { recursive: true });
  const work = await mkdtemp(path.join(cacheRoot(), 'tools', `.build-${b.name}-`));
  try {
    const bin = path.join(work, 'bin');
    await mkdir(bin);
    await b.build(work, bin);
    await rm(target, { recursive: true, force: true });
    await mkdir(target, { recursive: true });
    // The rename makes the finished binaries appear at once: a crash never leaves half a tool.
    await rename(bin, path.join(target, 'bin'));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  log('tools', `built ${b.name} ${b.version} in ${Math.round((Date.now() - started) / 1000)}s`);
}

async function run(cmd: string, args: string[]): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

/** Installs a Debian package unless `file` (what it installs) is there already. */
async function ensureDebianPackage(pkg: string, file: string): Promise<void> {
  if (existsSync(file)) return;
  log('tools', `installing Debian's ${pkg} package`);
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const apt = async (args: string[]) => (sudo.length ? run('sudo', ['apt-get', ...args]) : run('apt-get', args));
  await apt(['update', '-qq']);
  await apt(['install', '-y', '-qq', '--no-install-recommends', pkg]);
  if (!existsSync(file)) throw new Error(`${file} is still missing after apt-get install ${pkg}`);
}

/** Debian's Chromium, which the web view's browser tests drive (no browser is downloaded). */
export const CHROMIUM = '/usr/bin/chromium';

/** Makes every binary of the profile available, building what is missing; `browser`: Chromium too. */
export async function ensureTools(profile: Profile, o: { browser?: boolean } = {}): Promise<ToolPaths> {
  const wanted =
    profile === 'full'
      ? (['etcd', 'kubernetes', 'temporal', 'kwok'] as const)
      : (['etcd', 'kubernetes', 'temporal'] as const);
  await ensureDebianPackage('docker-registry', toolPaths().registry);
  if (o.browser) await ensureDebianPackage('chromium', CHROMIUM);
  for (const name of wanted) await ensureGoBuild(builds[name]);
  return toolPaths();
}
