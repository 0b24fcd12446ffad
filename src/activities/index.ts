// All activities, built over the worker's shared dependencies.
import type { KubeClient } from '../k8s/rest-client';
import { TargetClusters } from '../k8s/target-cluster';
import { applyActivities } from './apply';
import { BlobCache } from './blob-cache';
import { defaultCrActivities } from './default-cr';
import { deleteActivities } from './delete';
import { fetchActivities } from './fetch';
import { installActivities } from './install';
import { kcpActivities } from './kcp';
import { readinessActivities } from './readiness';
import { renderActivities } from './render';
import { reportActivities } from './report';

export interface ActivityDeps {
  /** The control-plane cluster (Kymas, ModuleTemplates, Manifests, kubeconfig Secrets). */
  kcp: KubeClient;
  /** Directory of the content-addressed blob cache. */
  cacheDir: string;
  /** Target-cluster clients (one per worker, with its Secret watch); a fresh one by default. */
  targets?: TargetClusters;
}

export function createActivities(deps: ActivityDeps) {
  const cache = new BlobCache(deps.cacheDir);
  const targets = deps.targets ?? new TargetClusters(deps.kcp);
  const steps = {
    ...kcpActivities(deps.kcp, cache, targets),
    ...fetchActivities(deps.kcp, cache),
    ...renderActivities(cache),
    ...applyActivities(targets, cache),
    ...defaultCrActivities(deps.kcp, targets),
    ...readinessActivities(deps.kcp, targets),
    ...deleteActivities(targets, cache),
  };
  return { ...steps, ...installActivities(steps), ...reportActivities(steps) };
}

export type Activities = ReturnType<typeof createActivities>;
