// Who this product is to the API servers it writes to: the field manager of every write and
// the value of the managed-by label on every object it applies.
export const FIELD_MANAGER = 'klm-temporal';
export const MANAGED_BY = 'klm-temporal';
