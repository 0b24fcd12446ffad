// How the modules' actions run (ModuleAction, src/decisions/module-steps.ts): the installs that
// start together in one activity; checks that read a target cluster and the steps of a removal
// as activities of their own; checks that decide from what the watches told, and the Manifests'
// own steps, several modules together in one local activity. Each ends in an outcome the
// module's state takes back.
import { defaultNamespaceFor } from '../api/names';
import type { KymaRef } from '../contract/kyma';
import type { ReconcileSettings } from '../contract/settings';
import type { InstallsDone, Work } from '../decisions/kyma-run';
import type { StartedAction } from '../decisions/module-pool';
import type { ModuleAction, ModuleOutcome } from '../decisions/module-steps';
import type { InstallModuleInput } from '../activities/install/install';
import type { SyncRuntimeCatalogInput } from '../contract/runtime';
import { controlPlane, installer, targetSteps } from './activity-options';
import { failureOf } from './failure';
import type { LocalLane } from './local-lane';

export interface ModuleActions {
  /** One action as an activity of its own. */
  run(a: StartedAction): Promise<ModuleOutcome>;
  /** Installs that start together, in one activity: an outcome each, in their order; and the catalog sync that goes along. */
  install(w: InstallsWork, uid: string): Promise<InstallsDone>;
  /** Several modules' local actions in one local activity, an outcome each, in their order. */
  runLocally(actions: StartedAction[]): Promise<ModuleOutcome[]>;
  /** The modules' work the run asks for: one of the above (`uid`: the Kyma's). */
  perform(w: ModuleWork, uid: string): Promise<ModuleOutcome | ModuleOutcome[] | InstallsDone>;
}

type ModuleWork = Extract<Work, { kind: 'module' | 'installs' | 'modules' }>;
type InstallsWork = Extract<Work, { kind: 'installs' }>;
type Installer = ReturnType<typeof installer>;

export function moduleActions(kyma: KymaRef, settings: ReconcileSettings, lane: LocalLane): ModuleActions {
  const { installModules } = installer(settings.crdEstablishedTimeoutMs);
  const kcp = lane.serial(controlPlane);
  const defaultNamespace = defaultNamespaceFor(settings.defaultNamespace, kyma.name);
  /** The Kyma as target-cluster activities need it. */
  const target = (a: StartedAction): KymaRef => (a.remote ? { ...kyma, remote: true } : kyma);
  return {
    // Each returns the activity's promise with one `then`: the SDK's sandbox pays for every promise
    // workflow code makes, an `await` too (bench/workflow-promises.ts).
    run(started) {
      const a = started.action;
      const on = { kyma: target(started), module: started.module };
      const failed = (err: unknown): ModuleOutcome => ({ kind: a.kind, failure: failureOf(err) });
      switch (a.kind) {
        case 'checkReadiness': {
          const { kind: _, ...check } = a;
          return targetSteps.checkReadiness({ ...on, ...check }).then((value) => ({ kind: a.kind, value }), failed);
        }
        case 'findBlockers':
          return targetSteps
            .findBlockingResources({ ...on, cr: a.cr, exceptDefault: a.exceptDefault, rendered: a.rendered })
            .then((value) => ({ kind: a.kind, value }), failed);
        case 'deleteDefaultCr':
          return targetSteps
            .deleteDefaultCr({ ...on, cr: a.cr, keepClusterScoped: a.keepClusterScoped })
            .then((value) => ({ kind: a.kind, value }), failed);
        case 'deleteObjects':
          return targetSteps
            .deleteModuleObjects({
              ...on,
              rendered: a.rendered,
              ...(a.cr ? { cr: a.cr } : {}),
              ...(a.also ? { also: a.also } : {}),
            })
            .then((value) => ({ kind: a.kind, value }), failed);
        case 'releaseObjects':
          return targetSteps
            .releaseModuleObjects({ ...on, rendered: a.rendered, ...(a.cr ? { cr: a.cr } : {}) })
            .then(() => ({ kind: a.kind }), failed);
        default:
          return this.runLocally([started]).then((outcomes) => outcomes[0]!, failed);
      }
    },
    install({ started: installs, catalog }, uid) {
      const inputs = installs.map((started) => {
        const a = started.action as Extract<ModuleAction, { kind: 'install' }>;
        return {
          kyma: target(started),
          module: a.module,
          params: { kymaNamespace: kyma.namespace, kymaName: kyma.name, module: a.module.name, defaultNamespace },
          crdTimeoutMs: settings.crdEstablishedTimeoutMs,
          ...(a.previous ? { previous: a.previous } : {}),
          ...(a.previousCluster ? { previousCluster: a.previousCluster } : {}),
          check: true,
        };
      });
      return installedTogether(installModules, inputs, catalog && { kyma, uid, ...catalogInput(catalog) });
    },
    perform(w, uid) {
      if (w.kind === 'module') return this.run(w.started);
      return w.kind === 'installs' ? this.install(w, uid) : this.runLocally(w.started);
    },
    runLocally(actions) {
      return kcp.runModuleActions({
        kyma,
        actions: actions.map((s) => ({ module: s.module, action: s.action })),
      });
    },
  };
}

/** The catalog sync's part of the Kyma's action. */
const catalogInput = ({ visibility, full, after }: NonNullable<InstallsWork['catalog']>) => ({
  visibility,
  full,
  after,
});

/**
 * The installs in one activity, and the catalog sync `sync` beside them. The activity itself
 * fails only when Temporal gives up on it (its worker lost, again and again): each module so,
 * and the catalog sync.
 */
function installedTogether(
  installModules: Installer['installModules'],
  installs: InstallModuleInput[],
  sync: SyncRuntimeCatalogInput | undefined,
): Promise<InstallsDone> {
  return installModules({ installs, ...(sync ? { catalog: sync } : {}) }).then(
    (done): InstallsDone => ({
      modules: done.installs.map((o): ModuleOutcome => ({ kind: 'install', ...o })),
      ...(done.catalog ? { catalog: { kind: 'syncCatalog', value: done.catalog } } : {}),
    }),
    (err: unknown): InstallsDone => {
      const failure = failureOf(err);
      return {
        modules: installs.map((): ModuleOutcome => ({ kind: 'install', failure })),
        ...(sync ? { catalog: { kind: 'syncCatalog', value: { failure } } } : {}),
      };
    },
  );
}
