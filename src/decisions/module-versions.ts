// What runs and what is wanted, for a module of a Kyma as people ask about it (klm module list,
// why, the web view). What runs is the version of the module's status entry, which the worker
// writes only once an install of it succeeded (ModuleState.report; KymaState.entries gives a
// module that could not be resolved none); what is wanted is the module's resolution: its pin,
// else what its channel points at, also when that version cannot be installed.
import type { ModuleStatus } from '../api/kyma';
import type { Resolution } from '../contract/module';

export interface ModuleVersions {
  installed?: string;
  wanted?: string;
}

export function moduleVersions(
  status: Pick<ModuleStatus, 'version'> | undefined,
  resolution: Resolution | undefined,
): ModuleVersions {
  const wanted = resolution?.module ? resolution.module.version : resolution?.version;
  return { ...(status?.version ? { installed: status.version } : {}), ...(wanted ? { wanted } : {}) };
}
