// The state of a direct install, by the community-modules request's rules: the module is there
// while klm's record or its default CR is (Deleting once the CR has a deletionTimestamp); it is
// Ready only when the install finished, the default CR is applied and Ready, and the manager is
// available and runs the version asked for. The lifecycle manager's own readiness rule
// (evaluateReadiness) decides manager and CR, so a module reads the same either way.
import { MODULE_VERSION_ANNOTATION } from '../api/names';
import { stateOf } from '../api/reasons';
import { refOf, type ObjectId } from '../api/object-id';
import type { KubeObject } from '../api/shared';
import { evaluateReadiness, type ModuleCrView } from '../decisions/readiness';
import type { WorkloadView } from '../decisions/workload';
import type { KubeClient } from '../k8s/rest-client';
import type { DirectRecord } from './direct-record';

export interface DirectState {
  state: string;
  message: string;
  /** The version the manager runs, when it can be told. */
  runningVersion?: string;
  /** The default CR's own status.state. */
  crState?: string;
}

export type Manager = KubeObject &
  WorkloadView & { spec?: { template?: { spec?: { containers?: { name: string; image?: string }[] } } } };

/** The version a manager runs: what klm stamped on it, else its app.kubernetes.io/version label, else its manager container's image tag. */
export function runningVersionOf(m: Manager): string | undefined {
  const stamped =
    m.metadata.annotations?.[MODULE_VERSION_ANNOTATION] ?? m.metadata.labels?.['app.kubernetes.io/version'];
  if (stamped) return stamped;
  const image = m.spec?.template?.spec?.containers?.find((c) => c.name.includes('manager'))?.image;
  const tag = image && !image.includes('@') ? /:([^:/]+)$/.exec(image)?.[1] : undefined;
  return tag?.replace(/^v(?=\d)/, '');
}

async function live<T extends KubeObject>(target: KubeClient, o: ObjectId | undefined): Promise<T | undefined> {
  if (!o) return undefined;
  try {
    return await target.get<T>(o.apiVersion, o.kind, o.name, o.namespace);
  } catch {
    // A kind the cluster no longer serves: the object is not there.
    return undefined;
  }
}

export async function directState(target: KubeClient, r: DirectRecord): Promise<DirectState> {
  const [manager, cr] = await Promise.all([
    live<Manager>(target, r.manager),
    live<KubeObject & ModuleCrView>(target, r.defaultCr),
  ]);
  const runningVersion = manager ? runningVersionOf(manager) : undefined;
  const crState = cr?.status?.state;
  const base = { ...(runningVersion ? { runningVersion } : {}), ...(crState ? { crState } : {}) };
  if (cr?.metadata.deletionTimestamp)
    return {
      ...base,
      state: 'Deleting',
      message: `its default CR ${r.defaultCr!.kind} ${r.defaultCr!.name} is being deleted`,
    };
  if (r.phase === 'Installing')
    return {
      ...base,
      state: 'Processing',
      message: `the install of ${r.version} did not finish: run \`klm module add\` again to finish it`,
    };
  const readiness = evaluateReadiness({
    paused: false,
    ...(r.manager ? { manager: { ref: refOf(r.manager), live: manager } } : {}),
    ...(r.defaultCr && r.customResourcePolicy === 'CreateAndDelete' ? { cr: { ref: r.defaultCr, live: cr } } : {}),
  });
  const state = stateOf(readiness.reason);
  if (state === 'Ready' && runningVersion && runningVersion !== r.version)
    return { ...base, state: 'Processing', message: `the manager runs ${runningVersion}, not ${r.version} yet` };
  return { ...base, state, message: readiness.message };
}
