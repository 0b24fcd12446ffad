// The reconcile settings of this worker (its environment): each run of a Kyma's workflow reads
// them when it starts, so that a run that continues as new takes the settings of the version it
// moved to (src/contract/settings.ts).
import type { ReconcileSettings } from '../contract/settings';

export function settingsActivities(settings: ReconcileSettings) {
  return {
    reconcileSettings: (): Promise<ReconcileSettings> => Promise.resolve(settings),
  };
}
