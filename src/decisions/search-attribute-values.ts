// Search attribute values within Temporal's limits. The server refuses a workflow task whose
// upsert holds a value larger than its limit (2 KB per value by default,
// `limit.searchAttributesSizeOfValueLimit`) and terminates the workflow: a Kyma with a few
// hundred modules listed them all in `Modules` and lost its workflow. Pure.
import { utf8Bytes } from './utf8';

/** What one value may take, as JSON, with room to spare below the server's default of 2,048 bytes. */
export const SEARCH_ATTRIBUTE_VALUE_BYTES = 1_900;

/**
 * The leading distinct values of a keyword list whose JSON fits in `maxBytes`, and how many
 * were left out (a person reading the workflow's details is told).
 */
export function fitKeywordList(
  values: string[],
  maxBytes = SEARCH_ATTRIBUTE_VALUE_BYTES,
): { values: string[]; omitted: number } {
  const distinct = [...new Set(values)];
  const kept: string[] = [];
  // `[` and `]`, then `"value"` and a comma for each (JSON escapes aside: names are label values).
  let size = 2;
  for (const v of distinct) {
    const add = utf8Bytes(JSON.stringify(v)) + (kept.length ? 1 : 0);
    if (size + add > maxBytes) break;
    kept.push(v);
    size += add;
  }
  return { values: kept, omitted: distinct.length - kept.length };
}

/** A Kyma workflow's search attribute values (and how many modules `Modules` left out). */
export interface SearchAttributeValues {
  state: string;
  channel: string;
  modules: string[];
  omitted: number;
  inError: string[];
  versions: string[];
}

/**
 * Whether a status write upserts the Kyma's search attributes (each upsert is a visibility write,
 * the dearest thing a status write brings the server): when a value changed since `last`. A Kyma
 * that stays Processing upserts only a change of its state, channel or modules, not each version
 * an install on its way reaches (three modules would write up to five times): the versions it
 * reached show with the state it settles in (Ready, Error, Warning), and a module in Error makes
 * the Kyma's state change.
 */
export function upsertDue(last: SearchAttributeValues | undefined, next: SearchAttributeValues): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!last) return true;
  if (!same([last.state, last.channel, last.modules], [next.state, next.channel, next.modules])) return true;
  if (next.state === 'Processing') return false;
  return !same([last.inError, last.versions], [next.inError, next.versions]);
}
