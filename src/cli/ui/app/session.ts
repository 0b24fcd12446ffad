// The page's session: the token of the address klm printed, and the Kyma it shows.
import { kymaOf, tokenOf } from './urls';

export const session = { token: tokenOf(location.hash), kyma: kymaOf(location.search) };
