// What the catalog's button does with an entry: add a managed module to the Kyma, or install it
// directly (a community module always; a managed one without a Kyma, or when asked for).
import type { CatalogEntry } from './types';

export interface AddChoice {
  label: string;
  /** What the user confirms first: no support for a community module, or none for a managed one beside the Kyma. */
  confirm?: 'community' | 'direct';
  /** The module to add: a managed module's name, a community module's origin. */
  module: string;
  /** A managed module installed directly beside the Kyma (the server needs telling; other cases decide themselves). */
  direct: boolean;
}

export function addChoice(e: Pick<CatalogEntry, 'name' | 'origin'>, kymaExists: boolean, advanced: boolean): AddChoice {
  const community = e.origin !== 'kyma';
  const direct = community || !kymaExists || advanced;
  const besideKyma = direct && !community && kymaExists;
  return {
    label: community ? 'Install (community)' : kymaExists && !direct ? 'Add to Kyma' : 'Install directly',
    ...(community ? { confirm: 'community' as const } : besideKyma ? { confirm: 'direct' as const } : {}),
    module: community ? e.origin : e.name,
    direct: besideKyma,
  };
}

/** The body of POST /api/add: the choice, and the channel chosen if any. */
export function addRequest(choice: AddChoice, channel: string): { module: string; channel?: string; direct?: true } {
  return {
    module: choice.module,
    ...(channel ? { channel } : {}),
    ...(choice.direct ? { direct: true as const } : {}),
  };
}
