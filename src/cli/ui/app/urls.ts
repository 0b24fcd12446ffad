// The page's addresses: its token and Kyma (from its own address), the API calls and event streams.

export const DEFAULT_KYMA = 'kyma-system/default';

/** The token from the address's fragment: never sent to a server, never in a Referer. */
export function tokenOf(hash: string): string {
  return new URLSearchParams(hash.slice(1)).get('token') || '';
}

/** The Kyma the address names (`?kyma=`). */
export function kymaOf(search: string): string {
  return new URLSearchParams(search).get('kyma') || DEFAULT_KYMA;
}

/** The query of the page's address for a Kyma. */
export function pageQuery(kyma: string): string {
  return '?kyma=' + encodeURIComponent(kyma);
}

/** The namespace of `namespace/name`. */
export function namespaceOf(kyma: string): string {
  return kyma.split('/')[0] ?? '';
}

/** An API call's address: every call names the Kyma. */
export function callUrl(path: string, kyma: string): string {
  return path + (path.includes('?') ? '&' : '?') + 'kyma=' + encodeURIComponent(kyma);
}

/** The stream of a Kyma's changes (an EventSource sends no header: the token goes in the query). */
export function eventsUrl(kyma: string, token: string): string {
  return '/api/events?kyma=' + encodeURIComponent(kyma) + '&token=' + encodeURIComponent(token);
}

/** The stream of a namespace's fleet changes. */
export function fleetEventsUrl(namespace: string, token: string): string {
  return '/api/fleet-events?namespace=' + encodeURIComponent(namespace) + '&token=' + encodeURIComponent(token);
}
