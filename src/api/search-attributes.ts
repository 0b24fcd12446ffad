// The custom search attributes every Kyma workflow carries, so that the Temporal UI and
// visibility queries list clusters by name, namespace, state, channel and modules.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  KymaName: 'Keyword',
  KymaNamespace: 'Keyword',
  KymaState: 'Keyword',
  Channel: 'Keyword',
  Modules: 'KeywordList',
} as const;

export const SA = {
  KymaName: defineSearchAttributeKey('KymaName', SearchAttributeType.KEYWORD),
  KymaNamespace: defineSearchAttributeKey('KymaNamespace', SearchAttributeType.KEYWORD),
  KymaState: defineSearchAttributeKey('KymaState', SearchAttributeType.KEYWORD),
  Channel: defineSearchAttributeKey('Channel', SearchAttributeType.KEYWORD),
  Modules: defineSearchAttributeKey('Modules', SearchAttributeType.KEYWORD_LIST),
};
