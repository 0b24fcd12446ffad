// The custom search attributes every Kyma workflow carries, so that the Temporal UI and
// visibility queries list clusters by name, namespace, state, channel and modules.
export const SEARCH_ATTRIBUTES = {
  KymaName: 'Keyword',
  KymaNamespace: 'Keyword',
  KymaState: 'Keyword',
  Channel: 'Keyword',
  Modules: 'KeywordList',
} as const;

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;
