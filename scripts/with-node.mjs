// Runs a command with another Node.js first on PATH: by default the LTS the container image uses,
// so that the suite can be run on it where the machine has an older Node. The binary comes from
// npm (Node's release builds, repackaged as `node-<platform>-<arch>`, the packages behind npm's
// `node`; `npm pack` checks the tarball against the registry's integrity hash) and is kept outside
// the repository, in ~/.cache/klm-temporal/node-<version>/bin/node.
//   node scripts/with-node.mjs npm test
//   node scripts/with-node.mjs --node 24.21.0 npx vitest run --project unit
// npm and npx stay the machine's, but start with `#!/usr/bin/env node`: they run on the Node put first.
// Plain JavaScript on purpose: it runs before anything is installed.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import path from 'node:path';

/** The Node.js of the image (Dockerfile); keep the two in step. */
const IMAGE_NODE = '24.21.0';

function usage(message) {
  console.error(`${message}\nusage: node scripts/with-node.mjs [--node <version>] <command> [args...]`);
  process.exit(2);
}

const args = process.argv.slice(2);
let version = IMAGE_NODE;
if (args[0] === '--node') {
  version = args[1] ?? '';
  args.splice(0, 2);
}
if (!/^\d+\.\d+\.\d+$/.test(version)) usage(`--node takes a full version such as ${IMAGE_NODE}, not "${version}"`);
if (args.length === 0) usage('no command given');

const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
if (!platform)
  usage(`no Node.js package on npm is used for ${process.platform} here; install Node ${version} yourself`);
const pkg = `node-${platform}-${process.arch}`;

const root =
  process.env.KLM_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'klm-temporal');
const dir = path.join(root, `node-${version}`);
const node = path.join(dir, 'bin', 'node');

if (!existsSync(node)) {
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
}

const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
const child = spawn(args[0], args.slice(1), { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('error', (err) => {
  console.error(`[with-node] cannot run ${args[0]}: ${err.message}`);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
