// Checks and registers the Kyma search attributes on a Temporal namespace.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../api/search-attributes';

const { IndexedValueType } = proto.temporal.api.enums.v1;

const TYPES: Record<(typeof SEARCH_ATTRIBUTES)[keyof typeof SEARCH_ATTRIBUTES], proto.temporal.api.enums.v1.IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

export async function missingSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const res = await connection.operatorService.listSearchAttributes({ namespace });
  return Object.keys(SEARCH_ATTRIBUTES).filter((k) => !(k in (res.customAttributes ?? {})));
}

/** Registers whichever Kyma search attributes the namespace lacks. */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (missing.length === 0) return;
  const searchAttributes = Object.fromEntries(missing.map((k) => [k, TYPES[SEARCH_ATTRIBUTES[k as keyof typeof SEARCH_ATTRIBUTES]]]));
  await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
}
