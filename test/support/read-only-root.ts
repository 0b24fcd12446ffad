// A process run as the Deployments in deploy/kustomize run it, short of the image: in a mount
// namespace of its own whose root filesystem is read-only (readOnlyRootFilesystem), with writable
// directories only where the pod mounts emptyDirs (/tmp, /var/cache/klm) and a read-only one where
// it mounts a Secret (/mnt here), as uid and gid 1000 (runAsUser, the image's USER), with no
// capabilities and no_new_privs (capabilities: drop ALL, allowPrivilegeEscalation: false). Setting
// that up takes root, as for a container runtime: unshare(1) and setpriv(1) of util-linux.
// As the image copies the app to /app and has node in /usr/local/bin, the clone's entries and this
// node are mounted read-only at one place of the namespace's own (/srv/app, /srv/node: /app does not
// exist on this host to mount over), so uid 1000 reaches them wherever the clone lives (under /tmp,
// which the pod's emptyDir hides, in a directory only root may enter, or in one itself: mktemp -d).
import { chmod, chown, copyFile, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { StartedProcess } from './processes';

export const POD_UID = 1000;

/** Whether this process may build the sandbox: root, as a container runtime is. */
export const canSandbox = process.getuid?.() === 0;

export interface PodVolumes {
  /** The host directories behind the pod's emptyDirs and Secret, to look into afterwards. */
  tmp: string;
  cache: string;
  secret: string;
}

/** Host directories for a pod's volumes; `secrets` are copied into its Secret volume (mode 0400). */
export async function podVolumes(secrets: Record<string, string>): Promise<PodVolumes> {
  const dir = await mkdtemp(path.join(tmpdir(), 'klm-pod-'));
  const volumes = { tmp: path.join(dir, 'tmp'), cache: path.join(dir, 'cache'), secret: path.join(dir, 'secret') };
  for (const d of Object.values(volumes)) await mkdir(d);
  await chmod(volumes.tmp, 0o1777);
  await chown(volumes.cache, POD_UID, POD_UID);
  for (const [name, from] of Object.entries(secrets)) {
    const to = path.join(volumes.secret, name);
    await copyFile(from, to);
    await chown(to, POD_UID, POD_UID);
    await chmod(to, 0o400);
  }
  return volumes;
}

const SETUP = [
  'set -e',
  // The app and node, first: the clone may live under the host's /tmp that is hidden below.
  'mount -t tmpfs -o mode=0755 tmpfs /srv',
  'mkdir /srv/app',
  'touch /srv/node',
  // Entry by entry: the clone's own directory may be one only root may enter (mktemp -d makes it 0700).
  'for f in "$POD_APP"/*; do',
  '  n=/srv/app/$(basename "$f")',
  '  if [ -d "$f" ]; then mkdir "$n"; else touch "$n"; fi',
  '  mount --bind "$f" "$n"',
  '  mount -o remount,bind,ro "$n"',
  'done',
  'mount --bind "$POD_NODE" /srv/node',
  'mount -o remount,bind,ro /srv/node',
  'mount -o remount,ro /srv',
  // The emptyDir of the worker's cache, under a /var/cache of the namespace's own.
  'mount -t tmpfs -o mode=0755 tmpfs /var/cache',
  'mkdir /var/cache/klm',
  'mount --bind "$POD_CACHE" /var/cache/klm',
  'mount --bind "$POD_SECRET" /mnt',
  // Last: the host's /tmp holds the directories above.
  'mount --bind "$POD_TMP" /tmp',
  'mount -o remount,bind,ro /',
  'mount -o remount,bind,ro /mnt',
  'cd /srv/app',
  `exec setpriv --reuid=${POD_UID} --regid=${POD_UID} --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all -- "$@"`,
].join('\n');

/** `node <args>` in the clone `app` on a read-only root, as uid 1000, with `env` only (and the volumes); the caller kills it. */
export function startNodeReadOnly(
  args: string[],
  env: NodeJS.ProcessEnv,
  volumes: PodVolumes,
  app = process.cwd(),
): StartedProcess {
  let out = '';
  const proc = spawn(
    'unshare',
    ['--mount', '--propagation', 'private', '--', 'sh', '-c', SETUP, 'sh', '/srv/node', ...args],
    {
      cwd: '/',
      env: {
        ...env,
        POD_APP: app,
        POD_NODE: process.execPath,
        POD_TMP: volumes.tmp,
        POD_CACHE: volumes.cache,
        POD_SECRET: volumes.secret,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { proc, out: () => out };
}
