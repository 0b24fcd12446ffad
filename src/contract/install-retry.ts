// How a module's install is tried again within its Kyma's `installModules` (src/activities/install/install-batch.ts):
// as Temporal tried an install activity of its own, five attempts, 1 s doubling up to 30 s. The
// workflow gives the batch time for every attempt of its modules (src/workflows/activity-options.ts).
export const MODULE_INSTALL_RETRY = {
  initialInterval: 1_000,
  backoffCoefficient: 2,
  maximumInterval: 30_000,
  maximumAttempts: 5,
} as const;
