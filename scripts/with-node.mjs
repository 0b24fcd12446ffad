// Runs a command on the Node.js of the container image (Dockerfile), or one given, where the
// machine's `node` is older: `npm start`, `npm test` and the other scripts of package.json start
// with it, so that they run on Node 24 whatever Node the machine has. A Node of the image's major
// or newer is used as it is (no download); an older one is replaced by the image's version, whose
// binary comes from npm (Node's release builds, repackaged as `node-<platform>-<arch>`, the packages
// behind npm's `node`; `npm pack` checks the tarball against the registry's integrity hash) and is
// kept outside the repository, in ~/.cache/klm-temporal/node-<version>/bin/node. Either way the
// Node it runs on goes first on PATH, so that every child started by name (npm, npx, tsx, vitest:
// `#!/usr/bin/env node`) runs on it too, and it says on stderr which one that is.
//   node scripts/with-node.mjs npm test
//   node scripts/with-node.mjs --node 24.21.0 npx vitest run --project unit    (exactly that version)
//   node scripts/with-node.mjs --sh 'node scripts/ensure-deps.mjs && exec tsx src/cli/klm.ts up' [args...]
// --sh runs a shell command line, the further arguments appended to it (as npm appends those after
// `npm start --`): package.json's scripts are such lines.
// Plain JavaScript on purpose: it runs before anything is installed.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import path from 'node:path';

/** The Node.js of the image (Dockerfile's NODE_IMAGE; test/unit/node-runtime.test.ts holds the two in step). */
const IMAGE_NODE = '24.21.0';

function usage(message) {
  console.error(
    `${message}\nusage: node scripts/with-node.mjs [--node <version>] <command> [args...]\n` +
      `       node scripts/with-node.mjs [--node <version>] --sh '<command line>' [args...]`,
  );
  process.exit(2);
}

const major = (version) => Number(version.split('.')[0]);

/** The node binary of `version` from npm, fetched into the cache on first use. */
function fetched(version) {
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
  if (!platform)
    usage(`no Node.js package on npm is used for ${process.platform} here; install Node ${version} yourself`);
  const pkg = `node-${platform}-${process.arch}`;
  const root =
    process.env.KLM_CACHE_DIR ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'klm-temporal');
  const dir = path.join(root, `node-${version}`);
  const node = path.join(dir, 'bin', 'node');
  if (existsSync(node)) return node;
  console.error(`[with-node] fetching ${pkg}@${version} from npm into ${dir} ...`);
  mkdirSync(root, { recursive: true });
  const tmp = mkdtempSync(path.join(root, `.node-${version}-`));
  try {
    const packed = execFileSync('npm', ['pack', `${pkg}@${version}`, '--pack-destination', tmp, '--silent'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const tarball = path.join(tmp, packed.trim().split('\n').pop());
    const unpacked = path.join(tmp, 'unpacked');
    mkdirSync(unpacked);
    // Only the binary: the headers and docs of the package are not needed to run anything.
    execFileSync('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1', 'package/bin/node']);
    // Another run may have fetched it meanwhile; its copy is as good.
    if (!existsSync(node)) {
      rmSync(dir, { recursive: true, force: true });
      renameSync(unpacked, dir);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return node;
}

/** The first `node` on `PATH`, resolved, or undefined. */
function nodeOnPath(PATH) {
  for (const dir of PATH.split(path.delimiter)) {
    const candidate = path.join(dir || '.', 'node');
    if (existsSync(candidate)) return realpathSync(candidate);
  }
  return undefined;
}

const args = process.argv.slice(2);
let version;
if (args[0] === '--node') {
  version = args[1] ?? '';
  args.splice(0, 2);
  if (!/^\d+\.\d+\.\d+$/.test(version)) usage(`--node takes a full version such as ${IMAGE_NODE}, not "${version}"`);
}
const shell = args[0] === '--sh';
if (shell) args.shift();
if (args.length === 0) usage(shell ? 'no command line given after --sh' : 'no command given');

const running = process.versions.node;
// The running Node when it is the version asked for, or (none asked for) of the image's major or newer.
const passThrough = version ? running === version : major(running) >= major(IMAGE_NODE);
const node = passThrough ? process.execPath : fetched(version ?? IMAGE_NODE);
const runs = passThrough ? running : (version ?? IMAGE_NODE);

const PATH = process.env.PATH ?? '';
const env = { ...process.env, KLM_WITH_NODE: node };
if (nodeOnPath(PATH) !== realpathSync(node)) env.PATH = `${path.dirname(node)}${path.delimiter}${PATH}`;
// Once per chain: a with-node under one that chose the same Node says nothing more.
if (process.env.KLM_WITH_NODE !== node)
  console.error(
    passThrough
      ? `[with-node] Node.js v${runs} (${node})`
      : `[with-node] Node.js v${runs} (${node}): this machine's node is v${running}, older than the image's ${major(IMAGE_NODE)}`,
  );

const [command, ...rest] = shell ? ['sh', '-c', `${args[0]} "$@"`, 'sh', ...args.slice(1)] : args;
const child = spawn(command, rest, { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('error', (err) => {
  console.error(`[with-node] cannot run ${args[0]}: ${err.message}`);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
