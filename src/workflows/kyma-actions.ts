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
  return {
    async run(a, uid) {
      switch (a.kind) {
        case 'load':
          return { kind: 'load', value: await kcp.loadKyma({ kyma, ...seen(a) }) };
        case 'resolve':
          return { kind: 'resolve', value: await kcp.resolveModules({ kyma, snapshot: a.snapshot, ...seen(a) }) };
        case 'addFinalizer':
          await kcp.addKymaFinalizer({ kyma, uid });
          return { kind: a.kind };
        case 'removeFinalizer':
          await kcp.removeKymaFinalizer({ kyma, uid });
          return { kind: a.kind };
        case 'cancelModules':
          await kcp.deleteManifests({ kyma, modules: a.names });
          return { kind: a.kind };
        case 'rolloutReport':
          // Best effort: a rollout that is gone (or not started) has nobody to tell.
          await getExternalWorkflowHandle(rolloutWorkflowId(channelOf(a.module, a.channel)))
            .signal(rolloutReport, { kyma: kyma.name, ...a.report })
            .catch(() => undefined);
          return { kind: a.kind };
        case 'awaitRollout': {
          const told = await tryOnce
            .tellRollout({ channel: channelOf(a.module, a.channel), kyma: kyma.name, version: a.version })
            .catch(() => ({ found: true }));
          return { kind: a.kind, missing: !told.found };
        }
        case 'startRollout':
          // Best effort: a rollout that still cannot be started is asked for again on the next resolution.
          await tryOnce
            .startRollout({
              channel: channelOf(a.module, a.channel),
              version: a.version,
              defaultNamespace: settings.defaultNamespace,
              waiting: kyma.name,
            })
            .catch(() => undefined);
          return { kind: a.kind };
        case 'syncRuntime': {
          const { controlPlane: spec, before, known } = a;
          const value = await runtimeKcp
            .syncRuntimeKyma({
              kyma,
              uid,
              controlPlane: spec,
              ...(before ? { before } : {}),
              ...(known ? { known } : {}),
            })
            .catch((err: unknown) => ({ failure: failureOf(err) }));
          return { kind: a.kind, value };
        }
        case 'syncCatalog': {
          const value = await runtime
            .syncRuntimeCatalog({ kyma, uid, visibility: a.visibility, full: a.full, after: a.after })
            .catch((err: unknown) => ({ failure: failureOf(err) }));
          return { kind: a.kind, value };
        }
        case 'cleanRuntime':
          return runtime.cleanRuntime({ kyma, uid }).then(
            () => ({ kind: a.kind }),
            (err: unknown) => ({ kind: a.kind, failure: failureOf(err) }),
          );
      }
    },
  };
}
