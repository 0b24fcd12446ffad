// Who this product is to the API servers it writes to: the field manager of every write and
// the value of the managed-by label on every object it applies.
export const FIELD_MANAGER = 'klm-temporal';
export const MANAGED_BY = 'klm-temporal';

/**
 * Who klm (the command line) is: the field manager of its writes, and the managed-by label of
 * what a direct install applies (not the lifecycle manager's: its workflows leave those alone).
 */
export const CLI_FIELD_MANAGER = 'klm-cli';
export const CLI_MANAGED_BY = 'klm-cli';
