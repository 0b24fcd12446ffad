export * from './shared';
export * from './kyma';
export * from './moduletemplate';
export * from './modulereleasemeta';
export * from './manifest';
export * from './search-attributes';
export * from './object-id';
