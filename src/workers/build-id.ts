// The worker's Temporal Worker Deployment version: `<deployment name>` (KLM_DEPLOYMENT_NAME) and a
// build id naming this code and its settings. Runs of Kyma workflows are pinned to the version
// that started them (docs/contributor/workflow-versioning.md), so two workers with the same build id must run the
// same workflow code: the build id is the package version, the commit (with a digest of the
// uncommitted changes when run from a checkout that has some), and a digest of the reconcile
// settings, which the runs read at their start (a change of them is a new version, that the runs
// move to as to new code). KLM_BUILD_ID overrides it all.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReconcileSettings } from '../contract/settings';
import type { KlmConfig } from '../infra/config';
import type { DeploymentVersion } from '../temporal/worker-deployment';

/** The package root: `src/workers/..` from sources, `dist/workers/..` when built. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const digest = (text: string, length = 8) => createHash('sha256').update(text).digest('hex').slice(0, length);

/** The settings' digest: their values in a fixed key order. */
export function settingsDigest(settings: ReconcileSettings): string {
  const keys = Object.keys(settings).sort() as (keyof ReconcileSettings)[];
  return digest(JSON.stringify(keys.map((k) => [k, settings[k]])));
}

/** The commit of a git checkout at `root`, and a digest of what differs from it; undefined when it is none. */
function checkoutCommit(root: string): string | undefined {
  if (!existsSync(path.join(root, '.git'))) return undefined;
  try {
    const git = (...args: string[]) =>
      // git's complaints (a checkout another user owns, say) are not the worker's to print: the build's commit is used then.
      execFileSync('git', ['-C', root, ...args], {
        encoding: 'utf8',
        timeout: 10_000,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    const commit = git('rev-parse', '--verify', 'HEAD^{commit}').trim().slice(0, 12);
    const changes = git('diff', 'HEAD', '--no-ext-diff', '--', 'src');
    return changes ? `${commit}-dirty${digest(changes)}` : commit;
  } catch {
    return undefined;
  }
}

/** The commit `npm run build` recorded in dist/build.json (from git, or KLM_SOURCE_COMMIT in an image build). */
function builtCommit(root: string): string | undefined {
  try {
    const { commit } = JSON.parse(readFileSync(path.join(root, 'dist', 'build.json'), 'utf8')) as { commit?: string };
    return commit ? commit.slice(0, 12) : undefined;
  } catch {
    return undefined;
  }
}

export interface BuildIdInput {
  /** KLM_BUILD_ID, when set. */
  explicit?: string;
  settings: ReconcileSettings;
  /** Where package.json is (the package root by default). */
  root?: string;
}

/** This worker's build id: KLM_BUILD_ID, else `<version>-<commit>-s<settings digest>`. */
export function buildId({ explicit, settings, root = ROOT }: BuildIdInput): string {
  if (explicit) return explicit;
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const commit = checkoutCommit(root) ?? builtCommit(root);
  if (!commit)
    throw new BuildIdUnknownError(
      'KLM_BUILD_ID is not set and the commit of this code is unknown (no git checkout, no commit in dist/build.json): ' +
        'set KLM_BUILD_ID to a value that names this code, or build with KLM_SOURCE_COMMIT set',
    );
  return `${version}-${commit}-s${settingsDigest(settings)}`;
}

/** No build id given and none to derive: the operator sets one. */
export class BuildIdUnknownError extends Error {}

/** The version a worker of `config` runs as. */
export function deploymentVersion(config: Pick<KlmConfig, 'deployment' | 'settings'>): DeploymentVersion {
  const { name, buildId: explicit } = config.deployment;
  return { deploymentName: name, buildId: buildId({ ...(explicit ? { explicit } : {}), settings: config.settings }) };
}
