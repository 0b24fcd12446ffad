// Which cluster a kubeconfig reaches: its API server's URL and the cluster's identity, the uid of
// its kube-system namespace (the same whatever URL or credentials reach it). Names and ids only:
// no credential is part of it, so it may enter workflow histories, statuses and Events.

export interface ClusterIdentity {
  /** The API server's URL as the kubeconfig names it (without any user info). */
  server: string;
  /** The uid of its kube-system namespace; absent when the credentials may not read it (the URL then stands for the cluster). */
  uid?: string;
}

/** What tells the cluster apart: its kube-system uid, else its URL. */
export function clusterKey(c: ClusterIdentity): string {
  return c.uid ?? c.server;
}

/** Whether two identities name one cluster: by uid when both have one (another URL of the same cluster is no other cluster), else by URL. */
export function sameCluster(a: ClusterIdentity, b: ClusterIdentity): boolean {
  return a.uid !== undefined && b.uid !== undefined ? a.uid === b.uid : a.server === b.server;
}

/** "https://host:6443 (kube-system uid …)", as messages name a cluster. */
export function describeCluster(c: ClusterIdentity): string {
  return c.uid ? `${c.server} (kube-system uid ${c.uid})` : c.server;
}

/** A server URL without user info, query or fragment: what may be told of it. */
export function serverOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
  } catch {
    return '(a server URL that cannot be parsed)';
  }
}
