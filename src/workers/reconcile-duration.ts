// Upstream's reconcile_duration_seconds: a Manifest whose reconciliation took a minute or more,
// by its name. There is no Manifest reconcile loop here; what comes closest is its module's
// install (installModule: fetch, render, apply, default CR, prune, readiness check), timed by the
// worker that runs it, failed attempts too (upstream times every reconciliation). The series goes
// when an install of it takes less, and when the worker removes or releases the module's objects
// (upstream: when the Manifest is deleted).
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { manifestName } from '../api/names';
import { setReconcileDuration } from '../infra/metrics';
import { moduleOfInput } from './activity-failures';

/** Upstream keeps a Manifest's duration only while its reconciliation takes at least this long. */
export const SLOW_RECONCILE_SECONDS = 60;

const INSTALL = 'installModule';
const REMOVALS = new Set(['deleteModuleObjects', 'releaseModuleObjects']);

/**
 * What an activity that took `seconds` tells of its Manifest's duration: the Manifest, with the
 * seconds to show or none (its series goes); undefined when the activity is no install or
 * removal of a module.
 */
export function reconcileDurationOf(
  activity: string,
  args: unknown[],
  seconds: number,
): { namespace: string; name: string; seconds?: number } | undefined {
  if (activity !== INSTALL && !REMOVALS.has(activity)) return undefined;
  const kyma = (args[0] as { kyma?: { namespace?: unknown; name?: unknown } } | undefined)?.kyma;
  const module = moduleOfInput(args);
  if (typeof kyma?.namespace !== 'string' || typeof kyma.name !== 'string' || !module) return undefined;
  const manifest = { namespace: kyma.namespace, name: manifestName(kyma.name, module) };
  return activity === INSTALL && seconds >= SLOW_RECONCILE_SECONDS ? { ...manifest, seconds } : manifest;
}

/** The interceptor: an install sets or removes its Manifest's series, whether it succeeds or fails; a removal that completes removes it. */
export const reconcileDuration: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const started = performance.now();
      const record = () => {
        const update = reconcileDurationOf(ctx.info.activityType, input.args, (performance.now() - started) / 1000);
        if (update) setReconcileDuration(update);
      };
      try {
        const result = await next(input);
        record();
        return result;
      } catch (err) {
        if (ctx.info.activityType === INSTALL) record();
        throw err;
      }
    },
  },
});
