// An install under way: the version it installs, and the news of the module that came while it
// ran. The install checks readiness itself right after its apply, reading the manager and the
// default CR from the cluster; news of those objects at a version that check read (or read past)
// is in the check already, and needs no check of its own: a local activity in a workflow task of
// its own, per module, on nearly every install (its manager becomes available while it runs).
import { resourceVersionReached } from '../api/shared';
import type { ResolvedModule } from '../contract/module';
import type { ObservedObject } from '../contract/readiness';
import type { ResourceChange } from '../contract/signals';

export class InstallUnderWay {
  /** The version being installed (undefined: none is). */
  module?: ResolvedModule;
  /**
   * The objects the news told of while an install runs (undefined: none runs); `unknown`: news a
   * check of objects cannot stand for (a Manifest's pause label, a cluster that stopped or
   * started answering).
   */
  private news: ObservedObject[] | 'unknown' | undefined;

  /** An install of `module` starts. */
  begin(module: ResolvedModule): void {
    this.module = module;
    this.news = [];
  }

  /** News of the module came (`undefined`: read everything again); noted while an install runs. */
  add(change: ResourceChange | undefined): void {
    if (this.news === undefined || this.news === 'unknown') return;
    if (!change?.observed || change.seen) this.news = 'unknown';
    else this.news.push(...change.observed);
  }

  /**
   * The install ended: whether its check's reads (`read`) tell of every object the news told of,
   * at that version or a later one. So the news needs no check of its own.
   */
  end(read?: ObservedObject[]): boolean {
    const news = this.news;
    this.module = undefined;
    this.news = undefined;
    if (news === undefined || news === 'unknown' || !read) return false;
    return news.every((n) =>
      read.some((r) => r.key === n.key && resourceVersionReached(r.resourceVersion, n.resourceVersion)),
    );
  }
}
