// One activity for a whole install: fetch → render → apply → default CR → prune. Its steps are
// idempotent, so a retry after a lost worker simply runs them again; the workflow's history
// holds one activity instead of five (and one workflow task instead of five).
import { heartbeat } from '@temporalio/activity';
import type { FetchedModule, KymaRef, RenderedRef, RenderParams, ResolvedModule } from '../workflows/types';
import type { applyActivities } from './apply';
import type { defaultCrActivities } from './default-cr';
import type { deleteActivities } from './delete';
import type { fetchActivities } from './fetch';
import type { renderActivities } from './render';

type Steps = ReturnType<typeof fetchActivities> & ReturnType<typeof renderActivities> & ReturnType<typeof applyActivities> & ReturnType<typeof defaultCrActivities> & Pick<ReturnType<typeof deleteActivities>, 'pruneObjects'>;

export function installActivities(steps: Steps) {
  return {
    /**
     * Installs `module` into the Kyma's target cluster. With `previous` (an upgrade), what the
     * previous version had and this one has not is pruned after the apply, in the safe order.
     */
    async installModule(
      ref: KymaRef,
      module: ResolvedModule,
      params: Omit<RenderParams, 'manager'>,
      crdTimeoutMs: number,
      previous: RenderedRef | null,
    ): Promise<{ fetched: FetchedModule; rendered: RenderedRef }> {
      const fetched = await steps.fetchLayer(module, params.defaultNamespace);
      heartbeat();
      const rendered = await steps.renderLayer(fetched.layer, { ...params, manager: fetched.manager });
      heartbeat();
      await steps.applyRendered(ref, rendered, crdTimeoutMs);
      if (module.customResourcePolicy === 'CreateAndDelete' && fetched.defaultCr) {
        heartbeat();
        await steps.ensureDefaultCr(ref, module, params.defaultNamespace);
      }
      if (previous && previous.digest !== rendered.digest) {
        heartbeat();
        await steps.pruneObjects(ref, module.name, previous, rendered);
      }
      return { fetched, rendered };
    },
  };
}
