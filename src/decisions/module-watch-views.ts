// What a module's watches told it: the newest view of its manager and default CR (from the
// bridge's watches, or a check's own reads), and the newest Manifest version a signal told of. A
// readiness check decides from the views that are news enough and reads the rest from the cluster.
import { idOfRef, objectKey } from '../api/object-id';
import { resourceVersionReached } from '../api/shared';
import type { DefaultCrRef } from '../contract/artifacts';
import type { Installed } from '../contract/module';
import type { ObservedObject } from '../contract/readiness';
import type { SeenVersions } from '../contract/seen-versions';
import type { ResourceChange } from '../contract/signals';
import type { CarriedModule } from '../contract/workflow-inputs';
import type { CheckStep } from './module-steps';
import { mergeSeen, seenField } from './seen-versions';

/** The objects a module's readiness reads, as the watches key them. */
export interface WatchedObjects {
  /** The objectKey of the installed manager. */
  manager?: string;
  /** The objectKey of the default CR the module manages. */
  cr?: string;
  /** The same CR keyed as a cluster-scoped object (without the namespace its reference carries). */
  clusterCr?: string;
}

/** What of the views a continue-as-new carries. */
export type CarriedViews = Pick<CarriedModule, 'seen' | 'views' | 'managerApplied'>;

/** The objects of `installed` (its manager) and of the managed default CR `cr` that the watches report. */
export function watchedObjects(installed: Installed | undefined, cr: DefaultCrRef | undefined): WatchedObjects {
  const m = installed?.rendered.manager;
  return {
    ...(m ? { manager: objectKey(idOfRef(m)) } : {}),
    // A cluster-scoped CR is seen without the namespace its reference carries (the template's
    // default): nothing namespaced is ever keyed without one, so the two name the same object.
    ...(cr
      ? { cr: objectKey(cr), clusterCr: objectKey({ apiVersion: cr.apiVersion, kind: cr.kind, name: cr.name }) }
      : {}),
  };
}

/**
 * Whether a readiness check reads the target cluster: an object of the module the watch has not
 * told of (or not since the install applied it), or the manager's pods. One that does not
 * decides from the views it carries and the worker's cache of Manifests alone.
 */
export function checkReadsTarget(step: CheckStep): boolean {
  return Boolean(step.inspectPods || (step.manager && !step.observed?.manager) || (step.cr && !step.observed?.cr));
}

export class WatchViews {
  /** The newest Manifest version a signal told of. */
  private seen: SeenVersions;
  /** The manager and default CR as the bridge last saw them, by objectKey. */
  private views: Record<string, ObservedObject>;
  /** The manager's resourceVersion as the last install applied it: older views of it are stale. */
  private managerApplied?: string;

  constructor(carried: CarriedViews = {}) {
    this.seen = carried.seen ?? {};
    this.views = carried.views ?? {};
    this.managerApplied = carried.managerApplied;
  }

  /**
   * News of the module's objects (`change.observed`) or of its Manifest's pause label
   * (`change.seen`); `installed`: whether the module was installed (before the first install
   * its objects are not known, and news of any is kept).
   */
  changed(change: ResourceChange | undefined, watched: WatchedObjects, o: { installed: boolean }): void {
    // No news of any object (the cluster stopped or started answering): read everything again.
    if (!change) this.forget();
    this.seen = mergeSeen(this.seen, change?.seen);
    this.see(change?.observed ?? [], watched, o);
  }

  /** Keeps the newest view of each object readiness reads, from the watch or from a check's own reads. */
  see(objects: ObservedObject[], watched: WatchedObjects, o: { installed: boolean }): void {
    const { manager, cr, clusterCr } = watched;
    for (const seen of objects) {
      // Before the first install its objects are not known: news of them is kept as it came
      // (the install keeps what turns out to be its manager's and CR's, and drops the rest).
      const key =
        seen.key === manager
          ? manager
          : seen.key === cr || seen.key === clusterCr
            ? cr
            : o.installed
              ? undefined
              : seen.key;
      if (key === undefined) continue;
      const view = { ...seen, key };
      // Only a strictly newer view already held wins (a deletion a relist found carries the last version seen).
      const have = this.views[key];
      if (
        have &&
        have.resourceVersion !== view.resourceVersion &&
        resourceVersionReached(have.resourceVersion, view.resourceVersion)
      )
        continue;
      this.views[key] = view;
    }
  }

  /** Everything is read from the cluster again. */
  forget(): void {
    this.views = {};
  }

  /** The Kyma's cluster changed: what was seen of the old one, and what was applied there, is forgotten. */
  clusterSwitched(): void {
    this.forget();
    this.managerApplied = undefined;
  }

  /** An install applied the module (the manager at `managerVersion`): views of other objects than `watched` are of no use any more. */
  installed(watched: WatchedObjects, managerVersion: string | undefined): void {
    this.managerApplied = managerVersion;
    const keys = [watched.manager, watched.cr];
    this.views = Object.fromEntries(Object.entries(this.views).filter(([k]) => keys.includes(k)));
  }

  /** The news a check carries: the Manifest version to reflect, and the views it may decide from. */
  forCheck(watched: WatchedObjects, o: { inspectPods: boolean }): Pick<CheckStep, 'seen' | 'observed'> {
    // The manager's view counts only if the watch saw it since this install applied it.
    const manager = watched.manager ? this.views[watched.manager] : undefined;
    // The watch tells of a rollout's start and end, not of each step: a closer look reads the manager afresh.
    const fresh =
      !o.inspectPods &&
      manager &&
      this.managerApplied &&
      resourceVersionReached(manager.resourceVersion, this.managerApplied)
        ? manager
        : undefined;
    const crView = watched.cr ? this.views[watched.cr] : undefined;
    const observed = { ...(fresh ? { manager: fresh } : {}), ...(crView ? { cr: crView } : {}) };
    return { ...seenField(this.seen), ...(Object.keys(observed).length ? { observed } : {}) };
  }

  /** The Manifest version a check of the pause label must reflect. */
  seenField(): { seen?: SeenVersions } {
    return seenField(this.seen);
  }

  /** `o.views`: whether the views of the manager and CR go along (else the next run reads them afresh). */
  carry(o: { views: boolean }): CarriedViews {
    return {
      ...seenField(this.seen),
      ...(o.views && Object.keys(this.views).length ? { views: this.views } : {}),
      ...(this.managerApplied ? { managerApplied: this.managerApplied } : {}),
    };
  }
}
