// The fleet's filter by state: a button per state with its count, and the Kymas it shows.
import type { FleetKyma } from './types';

/** The states and their counts, by state name. */
export function stateCounts(counts: Record<string, number>): [string, number][] {
  return Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The Kymas in the state chosen; all of them when none is ('' ). */
export function shownKymas(kymas: FleetKyma[], state: string): FleetKyma[] {
  return kymas.filter((k) => !state || k.state === state);
}
