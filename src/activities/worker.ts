// What a Kyma workflow asks of the worker it runs on: the reconcile settings of this worker (its
// environment), which each run reads when it starts, together with its first read of the Kyma, so
// that a run that continues as new takes the settings of the version it moved to
// (src/contract/settings.ts); and which worker version is current in its deployment, to tell
// whether it should move (docs/contributor/workflow-versioning.md).
import type { KymaRead, KymaSnapshot } from '../contract/kyma';
import type { ReconcileSettings } from '../contract/settings';
import type { KymaInput, LoadKymaInput } from './kyma';

/** How a run begins: this worker's settings, and the Kyma as `loadKyma` found it. */
export interface KymaRunStart {
  settings: ReconcileSettings;
  loaded: KymaRead;
}

export function workerActivities(
  settings: ReconcileSettings,
  currentVersion: () => Promise<string | undefined>,
  loadKyma: (input: LoadKymaInput) => Promise<KymaSnapshot | null>,
) {
  return {
    /** A run's first local activity: the settings it runs with, and its first read of the Kyma (one marker for both). */
    async beginKymaRun(input: KymaInput): Promise<KymaRunStart> {
      const snapshot = await loadKyma({ ...input, maxModules: settings.maxModulesPerKyma });
      return { settings, loaded: { ...(input.seen ? { seen: input.seen } : {}), snapshot } };
    },
    /** The build id of the deployment's current version; undefined when none is. */
    currentWorkerVersion: (): Promise<string | undefined> => currentVersion(),
  };
}
