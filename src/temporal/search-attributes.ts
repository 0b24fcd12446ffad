// Checks and registers the product's search attributes on a Temporal namespace.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../api/search-attributes';

const { IndexedValueType } = proto.temporal.api.enums.v1;

type Name = keyof typeof SEARCH_ATTRIBUTES;

const TYPES: Record<(typeof SEARCH_ATTRIBUTES)[Name], proto.temporal.api.enums.v1.IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** A client's or a worker's connection: both carry the operator service. */
export type OperatorConnection = Pick<Connection, 'operatorService'>;

export async function missingSearchAttributes(connection: OperatorConnection, namespace: string): Promise<Name[]> {
  const res = await connection.operatorService.listSearchAttributes({ namespace });
  return (Object.keys(SEARCH_ATTRIBUTES) as Name[]).filter((k) => !(k in (res.customAttributes ?? {})));
}

/** Registers whichever search attributes the namespace lacks. */
export async function ensureSearchAttributes(connection: OperatorConnection, namespace: string): Promise<void> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (missing.length === 0) return;
  const searchAttributes = Object.fromEntries(missing.map((k) => [k, TYPES[SEARCH_ATTRIBUTES[k]]]));
  await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
}

/** The Temporal CLI command that registers `missing` in `namespace`. */
export function registerCommand(namespace: string, missing: readonly Name[]): string {
  return [
    'temporal operator search-attribute create',
    `--namespace ${namespace}`,
    ...missing.map((k) => `--name ${k} --type ${SEARCH_ATTRIBUTES[k]}`),
  ].join(' ');
}

export class SearchAttributesMissingError extends Error {
  constructor(
    readonly namespace: string,
    readonly missing: readonly Name[],
  ) {
    super(
      `the Temporal namespace "${namespace}" lacks the search attributes ${missing.join(', ')}, ` +
        `which the workflows set; register them (once per namespace), then start again:\n  ` +
        `${registerCommand(namespace, missing)}`,
    );
    this.name = 'SearchAttributesMissingError';
  }
}

/**
 * Fails at start, not at the first workflow that sets one, when the namespace lacks a search
 * attribute; the error carries the command that registers them.
 */
export async function requireSearchAttributes(connection: OperatorConnection, namespace: string): Promise<void> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (missing.length) throw new SearchAttributesMissingError(namespace, missing);
}
