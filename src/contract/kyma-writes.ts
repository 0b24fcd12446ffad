// What a Kyma's workflow writes in one local activity (writeKymaChanges): its modules' Manifests
// (the newest report of each), the Kyma's status (and its copy in the runtime Kyma), its Events.
import type { KymaEvent } from '../api/events';
import type { KymaStatusInput } from '../api/kyma';
import type { DefaultCrRef, RenderedRef } from './artifacts';
import type { ResolvedModule } from './module';
import type { Readiness } from './readiness';

/** One module's Manifest as its newest report has it. */
export interface ManifestWrite {
  /** The Kyma's uid: the Manifest's owner. */
  uid: string;
  module: ResolvedModule;
  readiness: Readiness;
  rendered?: RenderedRef;
  /** The default CR the module manages (CreateAndDelete). */
  resource?: DefaultCrRef;
  /** The module CR's kind as `<apiVersion>/<kind>`, whatever the policy (the bridge watches it). */
  resourceKind?: string;
}

export interface KymaWrites {
  /** Manifests to write, at most one per module. */
  manifests?: ManifestWrite[];
  /** The Kyma's status, written after the Manifests it sums up. */
  status?: KymaStatusInput;
  /** The status goes to the runtime Kyma too, for its users (after the control plane's). */
  mirror?: true;
  /** Events, recorded last and best effort. */
  events?: KymaEvent[];
}

/** What came of the writes that may fail without holding the others up. */
export interface KymaWritesDone {
  /** The runtime's copy of the status could not be written. */
  runtimeFailure?: Readiness;
}
