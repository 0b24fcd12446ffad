// How each of the Kyma's own actions runs (KymaAction, src/decisions/kyma-steps.ts): the
// activity, local activity or signal it is, and the outcome the Kyma's state takes back.
import { getExternalWorkflowHandle } from '@temporalio/workflow';
import type { KymaRef } from '../contract/kyma';
import { rolloutReport, rolloutWorkflowId } from '../contract/rollout';
import type { ReconcileSettings } from '../contract/settings';
import type { KymaAction, KymaOutcome } from '../decisions/kyma-steps';
import { bestEffort, controlPlane, runtime, runtimeKyma } from './activity-options';
import { failureOf } from './failure';
import type { LocalLane } from './local-lane';

export interface KymaActions {
  run(action: KymaAction, uid: string): Promise<KymaOutcome>;
}

/** `lane`: where local activities take their turn (one at a time, in the order they were asked for). */
export function kymaActions(kyma: KymaRef, settings: ReconcileSettings, lane: LocalLane): KymaActions {
  const [kcp, tryOnce, runtimeKcp] = [lane.serial(controlPlane), lane.serial(bestEffort), lane.serial(runtimeKyma)];
  const seen = (s: { seen?: unknown }) => (s.seen ? { seen: s.seen } : {});
  const channelOf = (module: string, channel: string) => ({ namespace: kyma.namespace, module, channel });
  // Each returns the activity's promise with one `then`: the SDK's sandbox pays for every promise
  // workflow code makes, an `await` too (bench/workflow-promises.ts).
  /** The outcome of an action that tells nothing back. */
  const plain =
    (kind: 'removeFinalizer' | 'cancelModules' | 'rolloutReport' | 'startRollout' | 'cleanRuntime') =>
    (): KymaOutcome => ({ kind });
  return {
    run(a, uid): Promise<KymaOutcome> {
      switch (a.kind) {
        case 'load':
          return kcp
            .loadKyma({ kyma, ...seen(a), maxModules: settings.maxModulesPerKyma })
            .then((value) => ({ kind: 'load', value }));
        case 'resolve':
          return kcp
            .resolveModules({ kyma, snapshot: a.snapshot, ...seen(a) })
            .then((value) => ({ kind: 'resolve', value }));
        case 'removeFinalizer':
          return kcp.removeKymaFinalizer({ kyma, uid }).then(plain(a.kind));
        case 'cancelModules':
          return kcp.deleteManifests({ kyma, modules: a.names }).then(plain(a.kind));
        case 'rolloutReport':
          // Best effort: a rollout that is gone (or not started) has nobody to tell.
          return getExternalWorkflowHandle(rolloutWorkflowId(channelOf(a.module, a.channel)))
            .signal(rolloutReport, { kyma: kyma.name, ...a.report })
            .then(plain(a.kind), plain(a.kind));
        case 'awaitRollout':
          return tryOnce
            .tellRollout({ channel: channelOf(a.module, a.channel), kyma: kyma.name, version: a.version })
            .then(
              (told) => ({ kind: 'awaitRollout', missing: !told.found }),
              () => ({ kind: 'awaitRollout', missing: false }),
            );
        case 'startRollout':
          // Best effort: a rollout that still cannot be started is asked for again on the next resolution.
          return tryOnce
            .startRollout({
              channel: channelOf(a.module, a.channel),
              version: a.version,
              defaultNamespace: settings.defaultNamespace,
              waiting: kyma.name,
            })
            .then(plain(a.kind), plain(a.kind));
        case 'syncRuntime': {
          const { controlPlane: spec, before, known } = a;
          return runtimeKcp
            .syncRuntimeKyma({
              kyma,
              uid,
              controlPlane: spec,
              ...(before ? { before } : {}),
              ...(known ? { known } : {}),
            })
            .then(
              (value) => ({ kind: 'syncRuntime', value }),
              (err: unknown) => ({ kind: 'syncRuntime', value: { failure: failureOf(err) } }),
            );
        }
        case 'syncCatalog':
          return runtime.syncRuntimeCatalog({ kyma, uid, visibility: a.visibility, full: a.full, after: a.after }).then(
            (value) => ({ kind: 'syncCatalog', value }),
            (err: unknown) => ({ kind: 'syncCatalog', value: { failure: failureOf(err) } }),
          );
        case 'cleanRuntime':
          return runtime.cleanRuntime({ kyma, uid }).then(plain(a.kind), (err: unknown) => ({
            kind: 'cleanRuntime',
            failure: failureOf(err),
          }));
      }
    },
  };
}
