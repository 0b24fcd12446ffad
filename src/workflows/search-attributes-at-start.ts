// The Kyma search attribute values a run starts with, as Temporal holds them: those its start
// set (the bridge's, for a Kyma without status: Processing, its channel and modules) or the run
// before it left. A status write upserts only what differs from them (`upsertDue`).
import { workflowInfo } from '@temporalio/workflow';
import { SA } from '../api/search-attributes';
import type { SearchAttributeValues } from '../decisions/search-attribute-values';

/** The run's search attribute values at its start; none without a state. */
export function searchAttributesAtStart(): SearchAttributeValues | undefined {
  const sa = workflowInfo().typedSearchAttributes;
  const state = sa.get(SA.KymaState);
  if (state === undefined) return undefined;
  return {
    state,
    channel: sa.get(SA.Channel) ?? '',
    modules: sa.get(SA.Modules) ?? [],
    omitted: 0,
    inError: sa.get(SA.ModulesInError) ?? [],
    versions: sa.get(SA.ModuleVersions) ?? [],
  };
}
