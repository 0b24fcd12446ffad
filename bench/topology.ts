// Which clusters the bench's Kymas target. Production's topology is the default: a cluster per
// Kyma, each with credentials of its own, so that every per-runtime cost (the runtime Kyma, the
// catalog, the status writes, a client and a set of watches per cluster) is paid once per Kyma.
// One machine runs at most MAX_LOCAL_CLUSTERS further API servers (each with its own
// controller-manager, scheduler and kwok node: about 0.5 GB); beyond that each Kyma is a simulated
// runtime on them: a client certificate and a namespace of its own, watched in that namespace
// only (./credentials.ts), as the capacity run does. `shared`: Kymas share two clusters'
// kubeconfigs (the bench's topology before issue 38), so per-cluster costs are paid twice in all.

/** Further API servers one 2-core, 24 GB machine runs beside everything else. */
export const MAX_LOCAL_CLUSTERS = 20;

export interface Topology {
  clusterCount: number;
  /** Each Kyma a client certificate (and namespace) of its own on shared API servers. */
  distinctCredentials: boolean;
}

export function topology(o: {
  kind: string | undefined;
  /** The largest fleet of the run. */
  kymas: number;
  smoke: boolean;
  clusters?: number;
  distinctCredentials?: boolean;
}): Topology {
  const kind = o.kind ?? 'production';
  if (kind === 'shared')
    return { clusterCount: o.clusters ?? (o.smoke ? 1 : 2), distinctCredentials: o.distinctCredentials ?? false };
  if (kind !== 'production') throw new Error(`--topology: production or shared, not ${kind}`);
  // The smoke run (the test suite's) keeps to one further API server: its Kymas are simulated runtimes on it.
  const clusterCount = o.clusters ?? Math.min(o.kymas, o.smoke ? 1 : MAX_LOCAL_CLUSTERS);
  if (!Number.isInteger(clusterCount) || clusterCount < 1)
    throw new Error(`--clusters: the production topology needs at least one cluster, not ${o.clusters}`);
  return { clusterCount, distinctCredentials: o.distinctCredentials ?? o.kymas > clusterCount };
}
