// What a Kyma workflow asks of the worker it runs on: the reconcile settings of this worker (its
// environment), which each run reads when it starts, so that a run that continues as new takes
// the settings of the version it moved to (src/contract/settings.ts); and which worker version is
// current in its deployment, to tell whether it should move (docs/contributor/workflow-versioning.md).
import type { ReconcileSettings } from '../contract/settings';

export function workerActivities(settings: ReconcileSettings, currentVersion: () => Promise<string | undefined>) {
  return {
    reconcileSettings: (): Promise<ReconcileSettings> => Promise.resolve(settings),
    /** The build id of the deployment's current version; undefined when none is. */
    currentWorkerVersion: (): Promise<string | undefined> => currentVersion(),
  };
}
