// Which cluster a Kyma's modules go to: the control plane itself, unless a Secret in the
// Kyma's namespace labelled operator.kyma-project.io/kyma-name=<kyma> holds a kubeconfig
// (key "config", as upstream), in which case that remote cluster. The kubeconfig is read
// here, inside activities and the bridge, and never leaves this process.
import { createHash } from 'node:crypto';
import { serverOf, type ClusterIdentity } from '../api/cluster-identity';
import { LABELS, resourceVersionReached } from '../api/shared';
import { Informer } from './informer';
import { describeTlsProblem, KubeconfigSyntaxError, kubeConfigFromString } from './kubeconfig';
import type { KubeObject } from '../api/shared';
import { KubeApiError, TlsMaterialError } from './request-errors';
import { KubeClient, type KubeClientOptions } from './rest-client';

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

export class TargetClusterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetClusterError';
  }
}

/** The keys of a Secret's data that may hold its kubeconfig, in the order they are looked at. */
const KUBECONFIG_KEYS = ['config', 'kubeconfig', 'value'] as const;

/** Which key of the Secret's data holds its kubeconfig ("config", as upstream, when none does). */
export function kubeconfigDataKey(secret: KubeObject): string {
  const data = (secret as Secret).data ?? {};
  return KUBECONFIG_KEYS.find((k) => data[k]) ?? 'config';
}

function encodedKubeconfig(secret: KubeObject): string | undefined {
  return (secret as Secret).data?.[kubeconfigDataKey(secret)];
}

/**
 * Which client a Secret's kubeconfig gets: Secrets holding the very same kubeconfig (the same
 * cluster and credentials) share one client and one set of watches.
 */
export function kubeconfigKey(secret: KubeObject): string {
  const encoded = encodedKubeconfig(secret);
  return encoded
    ? createHash('sha256').update(encoded).digest('hex')
    : `${secret.metadata.uid}/${secret.metadata.resourceVersion}`;
}

/** How long a request to a target cluster may go without an answer (watches excepted). */
export const TARGET_REQUEST_TIMEOUT_MS = 20_000;

/** How long a client whose Secret changed keeps serving the requests already under way. */
const CLOSE_GRACE_MS = 60_000;

/** How long a failed read of a cluster's identity is remembered before it is tried again. */
const IDENTITY_RETRY_MS = 30_000;

/**
 * Which cluster `client` reaches: its server URL, and the uid of its kube-system namespace (the
 * URL alone when the credentials may not read it, 403). Anything else (unreachable, refused) fails.
 */
async function readIdentity(client: KubeClient): Promise<ClusterIdentity> {
  const server = serverOf(client.server);
  try {
    const uid = (await client.get('v1', 'Namespace', 'kube-system'))?.metadata.uid;
    return uid ? { server, uid } : { server };
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 403 && !err.discovery) return { server };
    throw err;
  }
}

export interface TargetClientOptions extends Omit<KubeClientOptions, 'reload'> {
  /** Whether a kubeconfig may run a command for its credential (`exec`, an auth provider's `cmd-path`); true by default. */
  allowExec?: boolean;
}

/**
 * A client for the cluster whose kubeconfig a Secret holds (key "config", as upstream). A 401
 * makes it read the kubeconfig again (tokens from files, plugin caches).
 */
export async function clientFromSecret(secret: KubeObject, opts: TargetClientOptions = {}): Promise<KubeClient> {
  const where = `Secret ${secret.metadata.namespace}/${secret.metadata.name}`;
  const encoded = encodedKubeconfig(secret);
  if (!encoded) throw new TargetClusterError(`${where} holds no kubeconfig under the key "config"`);
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  let kc;
  try {
    kc = kubeConfigFromString(text);
  } catch (err) {
    // Where the error is, never the parser's quote of the lines around it (kubeconfig.ts).
    const at = err instanceof KubeconfigSyntaxError ? err.at : '';
    throw new TargetClusterError(
      `${where} does not hold a valid kubeconfig: it is not YAML a kubeconfig can be read from${at}`,
    );
  }
  if (!kc.getCurrentCluster()) throw new TargetClusterError(`${where}: its kubeconfig has no current cluster`);
  const user = kc.getCurrentUser();
  if (
    opts.allowExec === false &&
    (user?.exec || (user?.authProvider as { config?: Record<string, unknown> } | undefined)?.config?.['cmd-path'])
  ) {
    throw new TargetClusterError(
      `${where}: its kubeconfig runs a command for its credential (exec or an auth provider's ` +
        `cmd-path), which this installation forbids (KLM_KUBECONFIG_EXEC=deny)`,
    );
  }
  const { allowExec: _allowExec, ...clientOptions } = opts;
  try {
    return await KubeClient.fromKubeConfig(kc, {
      requestTimeoutMs: TARGET_REQUEST_TIMEOUT_MS,
      ...clientOptions,
      reload: () => kubeConfigFromString(text),
    });
  } catch (err) {
    if (!(err instanceof TlsMaterialError)) throw err;
    throw new TargetClusterError(
      `${where} (data key "${kubeconfigDataKey(secret)}"): in its kubeconfig, ${describeTlsProblem(err.problem)}, and update the Secret`,
    );
  }
}

export class TargetClusters {
  private readonly clients = new Map<string, Promise<KubeClient>>();
  /** The namespaces whose Secrets may be read (`watchSecrets`); unset: all. */
  private namespaces?: readonly string[];
  /** Kubeconfig Secrets by `<namespace>/<kyma>`, kept by a watch once `watchSecrets` ran. */
  private readonly index = new Map<string, Secret>();
  /** Which client each Kyma's Secret last used: a rotated Secret drops the client it left. */
  private readonly used = new Map<string, string>();
  /** Per client: which cluster it reaches (read once; a failure is tried again after IDENTITY_RETRY_MS). */
  private readonly identities = new WeakMap<
    KubeClient,
    { at: number; ok: boolean; identity: Promise<ClusterIdentity> }
  >();

  constructor(
    readonly controlPlane: KubeClient,
    private readonly clientOptions: TargetClientOptions = {},
  ) {}

  /** Records that the Kyma `who` now uses client `key` (none: its Secret is gone); closes a client nobody uses any more. */
  private use(who: string, key: string | undefined): void {
    const before = this.used.get(who);
    if (before === key) return;
    if (key) this.used.set(who, key);
    else this.used.delete(who);
    if (!before || [...this.used.values()].includes(before)) return;
    const client = this.clients.get(before);
    this.clients.delete(before);
    // Activities still under way with it may finish; then its connections go.
    void client?.then(
      (c) => setTimeout(() => c.close(), CLOSE_GRACE_MS).unref(),
      () => undefined,
    );
  }

  /**
   * Keeps every kubeconfig Secret in memory through one watch, so that the activities of a
   * thousand remote Kymas do not each LIST Secrets. Only hits are served from it: a Kyma it
   * does not know (no Secret, or one the watch has not delivered yet) is looked up as before.
   * Returns the function that stops the watch.
   */
  async watchSecrets(namespaces?: readonly string[]): Promise<() => void> {
    this.namespaces = namespaces;
    const keyOf = (s: KubeObject) => `${s.metadata.namespace}/${s.metadata.labels?.[LABELS.kymaName]}`;
    const informers = (namespaces ?? [undefined]).map(
      (namespace) =>
        new Informer(this.controlPlane, {
          apiVersion: 'v1',
          kind: 'Secret',
          ...(namespace ? { namespace } : {}),
          labelSelector: LABELS.kymaName,
          onEvent: (type, s) => {
            const key = keyOf(s);
            if (type !== 'DELETED') {
              this.index.set(key, s);
              if (this.used.has(key)) this.use(key, kubeconfigKey(s));
            } else if (this.index.get(key)?.metadata.uid === s.metadata.uid) {
              this.index.delete(key);
              this.use(key, undefined);
            }
          },
        }),
    );
    await Promise.all(informers.map((i) => i.start()));
    return () => {
      for (const i of informers) i.stop();
      this.index.clear();
    };
  }

  private readonly secrets = new Map<string, { at: number; secret: Promise<Secret | undefined> }>();

  /** How long a Secret lookup is re-used: activities of one install share it, a change shows soon. */
  static readonly SECRET_TTL_MS = 5000;

  /**
   * The kubeconfig Secret of a Kyma, if it has one; a lookup up to `maxAgeMs` old is re-used.
   * `atLeast`: a resourceVersion of the Secret a signal told of, which the answer must reflect
   * (the watch's copy when it has caught up, else a fresh lookup).
   */
  async secretOf(
    namespace: string,
    kyma: string,
    maxAgeMs = TargetClusters.SECRET_TTL_MS,
    atLeast?: string,
  ): Promise<Secret | undefined> {
    // Outside the served namespaces no Secret can be read: never mistake that for "no Secret" (the control plane itself).
    if (this.namespaces && !this.namespaces.includes(namespace)) {
      throw new TargetClusterError(
        `Kyma ${namespace}/${kyma} is in a namespace this installation does not serve (KLM_KYMA_NAMESPACES: ${this.namespaces.join(', ')})`,
      );
    }
    const key = `${namespace}/${kyma}`;
    const known = maxAgeMs > 0 ? this.index.get(key) : undefined;
    if (known && (atLeast === undefined || resourceVersionReached(known.metadata.resourceVersion ?? '', atLeast)))
      return known;
    const hit = this.secrets.get(key);
    if (hit && atLeast === undefined && Date.now() - hit.at < maxAgeMs) return await hit.secret;
    const secret = this.controlPlane
      .list<Secret>('v1', 'Secret', { namespace, labelSelector: `${LABELS.kymaName}=${kyma}` })
      .then((l) => l.items[0]);
    secret.catch(() => this.secrets.delete(key));
    this.secrets.set(key, { at: Date.now(), secret });
    return await secret;
  }

  /** A client for the target cluster of Kyma `kyma` whose kubeconfig Secret (if any) is `secret` (cached per kubeconfig). */
  async clientOf(
    namespace: string,
    kyma: string,
    secret: Secret | undefined,
    expectRemote = false,
  ): Promise<KubeClient> {
    if (!secret && expectRemote) {
      throw new TargetClusterError(
        `the kubeconfig Secret of Kyma ${namespace}/${kyma} is gone; refusing to fall back to the control-plane cluster`,
      );
    }
    if (!secret) return this.controlPlane;
    const key = kubeconfigKey(secret);
    this.use(`${namespace}/${kyma}`, key);
    let client = this.clients.get(key);
    if (!client) {
      client = clientFromSecret(secret, this.clientOptions);
      client.catch(() => this.clients.delete(key));
      this.clients.set(key, client);
    }
    return await client;
  }

  /** Which cluster `client` reaches (read once per client, while it lives). */
  async identityOf(client: KubeClient): Promise<ClusterIdentity> {
    const hit = this.identities.get(client);
    if (hit && (hit.ok || Date.now() - hit.at < IDENTITY_RETRY_MS)) return await hit.identity;
    const entry = { at: Date.now(), ok: false, identity: readIdentity(client) };
    entry.identity.then(
      () => (entry.ok = true),
      () => undefined,
    );
    this.identities.set(client, entry);
    return await entry.identity;
  }
}
