// References to a module's artifacts. Small by rule: registries, digests, counts and names;
// manifests, descriptors and secrets never enter workflow history (the worker keeps the
// content in its content-addressed cache and can fetch it again by digest).
import type { ObjectId } from '../api/object-id';
import type { ObjectRef } from '../api/shared';

/** Where a module's layer lives: enough to fetch it again on any worker. */
export interface LayerRef {
  registry: string;
  repository: string;
  digest: string;
  size: number;
  /** 'yaml' for a plain YAML blob, 'tar' for an archive with one YAML file. */
  format: 'yaml' | 'tar';
}

export interface RenderParams {
  kymaNamespace: string;
  kymaName: string;
  module: string;
  defaultNamespace: string;
  /** From ModuleTemplate .spec.manager; else the first Deployment or StatefulSet. */
  manager?: ObjectRef;
}

/** The module's default CR (ModuleTemplate spec.data), and how its state is read. */
export interface DefaultCrRef extends ObjectId {
  /**
   * The ModuleTemplate's spec.customStateCheck: how this CR's fields map to a module state
   * (src/decisions/readiness.ts). Absent: the CR's .status.state decides.
   */
  customStateCheck?: StateCheck[];
}

/** One entry of ModuleTemplate spec.customStateCheck. */
export interface StateCheck {
  /** Dot-separated path into the CR, e.g. `status.health`. */
  jsonPath: string;
  value: string;
  mappedState: string;
}

/** What fetch found: the layer, and from the ModuleTemplate the manager and default CR. */
export interface FetchedModule {
  layer: LayerRef;
  manager?: ObjectRef;
  defaultCr?: DefaultCrRef;
}

export interface RenderedRef {
  layer: LayerRef;
  params: RenderParams;
  /** sha256 of the rendered object list, as stored in the worker's cache. */
  digest: string;
  objects: number;
  crds: string[];
  manager?: ObjectRef;
}
