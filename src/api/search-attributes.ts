// The custom search attributes of the workflows, so that the Temporal UI and visibility queries
// list clusters by name, namespace, state, channel, modules, modules in Error and module
// versions (`greeter@1.1.0`), and rollouts by module, channel, version and state.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  KymaName: 'Keyword',
  KymaNamespace: 'Keyword',
  KymaState: 'Keyword',
  Channel: 'Keyword',
  Modules: 'KeywordList',
  ModulesInError: 'KeywordList',
  ModuleVersions: 'KeywordList',
  ModuleName: 'Keyword',
  ModuleVersion: 'Keyword',
  RolloutState: 'Keyword',
} as const;

export const SA = {
  KymaName: defineSearchAttributeKey('KymaName', SearchAttributeType.KEYWORD),
  KymaNamespace: defineSearchAttributeKey('KymaNamespace', SearchAttributeType.KEYWORD),
  KymaState: defineSearchAttributeKey('KymaState', SearchAttributeType.KEYWORD),
  Channel: defineSearchAttributeKey('Channel', SearchAttributeType.KEYWORD),
  Modules: defineSearchAttributeKey('Modules', SearchAttributeType.KEYWORD_LIST),
  ModulesInError: defineSearchAttributeKey('ModulesInError', SearchAttributeType.KEYWORD_LIST),
  ModuleVersions: defineSearchAttributeKey('ModuleVersions', SearchAttributeType.KEYWORD_LIST),
  ModuleName: defineSearchAttributeKey('ModuleName', SearchAttributeType.KEYWORD),
  ModuleVersion: defineSearchAttributeKey('ModuleVersion', SearchAttributeType.KEYWORD),
  RolloutState: defineSearchAttributeKey('RolloutState', SearchAttributeType.KEYWORD),
};
