// Merging a status writer's new conditions into what the object carries: a condition keeps its
// lastTransitionTime while its status stays the same; a message is kept within what the CRDs
// (as upstream's metav1.Condition) allow, so that no status write is refused for its length.
import type { Condition, ConditionInput } from '../api/shared';
import { codePointBytes } from './utf8';

/** The CRDs' (and metav1.Condition's) limit on a condition's message. */
export const CONDITION_MESSAGE_BYTES = 32_768;

export function mergeConditions(
  old: Condition[] | undefined,
  next: ConditionInput[],
  generation: number,
  now: string,
): Condition[] {
  return next.map((c) => {
    const prev = old?.find((o) => o.type === c.type);
    const lastTransitionTime = prev && prev.status === c.status ? prev.lastTransitionTime : now;
    return {
      ...c,
      message: boundedText(c.message, CONDITION_MESSAGE_BYTES),
      observedGeneration: generation,
      lastTransitionTime,
    };
  });
}

/** `text` cut to at most `maxBytes` of UTF-8, marked with … where it was cut. */
export function boundedText(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  for (const ch of text) {
    const n = codePointBytes(ch.codePointAt(0)!);
    if (bytes + n > maxBytes - 3) return `${text.slice(0, i)}…`;
    bytes += n;
    i += ch.length;
  }
  return text;
}
