// How the modules' actions run (ModuleAction, src/decisions/module-steps.ts): installs, checks
// that read a target cluster and the steps of a removal as activities of their own; checks that
// decide from what the watches told, and the Manifests' own steps, several modules together in
// one local activity. Each ends in an outcome the module's state takes back.
import { defaultNamespaceFor } from '../api/names';
import type { KymaRef } from '../contract/kyma';
import type { ReconcileSettings } from '../contract/settings';
import type { StartedAction } from '../decisions/module-pool';
import type { ModuleOutcome } from '../decisions/module-steps';
import { controlPlane, installer, targetSteps } from './activity-options';
import { failureOf, installAttemptOf } from './failure';
import type { LocalLane } from './local-lane';

export interface ModuleActions {
  /** One action as an activity of its own. */
  run(a: StartedAction): Promise<ModuleOutcome>;
  /** Several modules' local actions in one local activity, an outcome each, in their order. */
  runLocally(actions: StartedAction[]): Promise<ModuleOutcome[]>;
}

export function moduleActions(kyma: KymaRef, settings: ReconcileSettings, lane: LocalLane): ModuleActions {
  const { installModule } = installer(settings.crdEstablishedTimeoutMs);
  const kcp = lane.serial(controlPlane);
  const defaultNamespace = defaultNamespaceFor(settings.defaultNamespace, kyma.name);
  /** The Kyma as target-cluster activities need it. */
  const target = (a: StartedAction): KymaRef => (a.remote ? { ...kyma, remote: true } : kyma);
  return {
    async run(started) {
      const a = started.action;
      const on = { kyma: target(started), module: started.module };
      try {
        switch (a.kind) {
          case 'install': {
            const params = {
              kymaNamespace: kyma.namespace,
              kymaName: kyma.name,
              module: a.module.name,
              defaultNamespace,
            };
            const value = await installModule({
              kyma: on.kyma,
              module: a.module,
              params,
              crdTimeoutMs: settings.crdEstablishedTimeoutMs,
              ...(a.previous ? { previous: a.previous } : {}),
              ...(a.previousCluster ? { previousCluster: a.previousCluster } : {}),
              check: true,
            });
            return { kind: a.kind, value };
          }
          case 'checkReadiness': {
            const { kind: _, ...check } = a;
            return { kind: a.kind, value: await targetSteps.checkReadiness({ ...on, ...check }) };
          }
          case 'findBlockers':
            return {
              kind: a.kind,
              value: await targetSteps.findBlockingResources({
                ...on,
                cr: a.cr,
                exceptDefault: a.exceptDefault,
                rendered: a.rendered,
              }),
            };
          case 'deleteDefaultCr':
            return {
              kind: a.kind,
              value: await targetSteps.deleteDefaultCr({ ...on, cr: a.cr, keepClusterScoped: a.keepClusterScoped }),
            };
          case 'deleteObjects': {
            const value = await targetSteps.deleteModuleObjects({
              ...on,
              rendered: a.rendered,
              ...(a.cr ? { cr: a.cr } : {}),
              ...(a.also ? { also: a.also } : {}),
            });
            return { kind: a.kind, value };
          }
          case 'releaseObjects':
            await targetSteps.releaseModuleObjects({ ...on, rendered: a.rendered, ...(a.cr ? { cr: a.cr } : {}) });
            return { kind: a.kind };
          default:
            return (await this.runLocally([started]))[0]!;
        }
      } catch (err) {
        const attempt = a.kind === 'install' ? installAttemptOf(err) : undefined;
        return { kind: a.kind, failure: failureOf(err), ...(attempt ? { attempt } : {}) };
      }
    },
    async runLocally(actions) {
      return await kcp.runModuleActions({
        kyma,
        actions: actions.map((s) => ({ module: s.module, action: s.action })),
      });
    },
  };
}
