// Merging a status writer's new conditions into what the object carries: a condition keeps its
// lastTransitionTime while its status stays the same.
import type { Condition, ConditionInput } from '../api/shared';

export function mergeConditions(old: Condition[] | undefined, next: ConditionInput[], generation: number, now: string): Condition[] {
  return next.map((c) => {
    const prev = old?.find((o) => o.type === c.type);
    const lastTransitionTime = prev && prev.status === c.status ? prev.lastTransitionTime : now;
    return { ...c, observedGeneration: generation, lastTransitionTime };
  });
}
