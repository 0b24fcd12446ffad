// The steps a Kyma workflow runs, as its decisions (KymaState and its parts) ask for them.
import type { ClusterIdentity } from '../api/cluster-identity';
import type { KymaEvent } from '../api/events';
import type { KymaStatusInput } from '../api/kyma';
import type { KymaSnapshot, Visibility } from '../contract/kyma';
import type { DesiredModule, ResolvedModule } from '../contract/module';
import type { RolloutReport } from '../contract/rollout';
import type { CatalogSync, RuntimeKymaSync, RuntimeSpec } from '../contract/runtime';
import type { Readiness } from '../contract/readiness';
import type { Resolution } from '../contract/module';
import type { SeenVersions } from '../contract/seen-versions';
import type { SearchAttributeValues } from './search-attribute-values';

export interface Dispatch {
  start: ResolvedModule[];
  update: { name: string; desired: DesiredModule }[];
  remove: string[];
  release: string[];
  events: KymaEvent[];
}

export type KymaStep =
  /** `seen`: versions the read must reflect (the signals' events). */
  | { kind: 'load'; seen?: SeenVersions }
  /** `snapshot`: the modules to resolve (all of the spec, or those a rollout admitted). */
  | { kind: 'resolve'; snapshot: KymaSnapshot; only?: string[]; seen?: SeenVersions }
  | { kind: 'removeFinalizer' }
  | { kind: 'event'; event: KymaEvent }
  | ({ kind: 'dispatch' } & Dispatch)
  /** The Kyma's Secret names another cluster now: its modules are told, and those that may have objects in `from` named. */
  | { kind: 'switchCluster'; from: ClusterIdentity; to: ClusterIdentity }
  /** The target cluster is unreachable for good: stop running the modules, delete their Manifests. */
  | { kind: 'cancelModules'; names: string[] }
  /**
   * `searchAttributes.omitted`: modules left out of `Modules` to keep it within Temporal's limit;
   * `inError` (`ModulesInError`) and `versions` (`ModuleVersions`, `greeter@1.1.0`) likewise cut.
   * `mirror`: the status goes to the runtime Kyma too, for its users.
   */
  | { kind: 'writeStatus'; status: KymaStatusInput; searchAttributes: SearchAttributeValues; mirror?: true }
  /** Tell the module's rollout how it stands at the version it admitted. */
  | { kind: 'rolloutReport'; module: string; channel: string; report: Omit<RolloutReport, 'kyma'> }
  /** Tell the module's rollout that this Kyma holds the module until it admits `version` (see `rolloutMissing`). */
  | { kind: 'awaitRollout'; module: string; channel: string; version: string }
  /** The channel has no rollout: start one for `version` (as the bridge would have), then tell it this Kyma waits. */
  | { kind: 'startRollout'; module: string; channel: string; version: string }
  /** The runtime Kyma: made sure of, with what changed in the control plane since `before`; its spec is what the runtime wants. */
  | { kind: 'syncRuntime'; controlPlane: RuntimeSpec; before?: RuntimeSpec; known?: RuntimeSpec }
  /** The module catalog this Kyma may see, into its runtime (`full`: read what the runtime holds). */
  | { kind: 'syncCatalog'; visibility: Visibility; full: boolean; after: number }
  /** The Kyma is going and its modules are gone: its runtime Kyma, catalog and CRDs go too. */
  | { kind: 'cleanRuntime' }
  /** `wakeAt`: load again at this (workflow) time, when a held upgrade's maintenance window opens. */
  | { kind: 'wait'; driftMs?: number; wakeAt?: number }
  /** Another Kyma under the same name: start over for it. */
  | { kind: 'restart' }
  | { kind: 'end' };

/** The steps that run as activities, local activities or signals (the others the workflow takes itself). */
export type KymaAction = Extract<
  KymaStep,
  {
    kind:
      | 'load'
      | 'resolve'
      | 'removeFinalizer'
      | 'cancelModules'
      | 'rolloutReport'
      | 'awaitRollout'
      | 'startRollout'
      | 'syncRuntime'
      | 'syncCatalog'
      | 'cleanRuntime';
  }
>;

/** How an action went, as the Kyma's state takes it. */
export type KymaOutcome =
  | { kind: 'load'; value: KymaSnapshot | null }
  | { kind: 'resolve'; value: Resolution[] }
  | { kind: 'syncRuntime'; value: RuntimeKymaSync | { failure: Readiness } }
  | { kind: 'syncCatalog'; value: CatalogSync | { failure: Readiness } }
  | { kind: 'cleanRuntime'; failure?: Readiness }
  /** `missing`: the rollout could not be told, as no workflow runs for it. */
  | { kind: 'awaitRollout'; missing: boolean }
  | { kind: 'removeFinalizer' | 'cancelModules' | 'rolloutReport' | 'startRollout' };

export function eventStep(type: KymaEvent['type'], reason: KymaEvent['reason'], message: string): KymaStep {
  return { kind: 'event', event: { type, reason, message } };
}
