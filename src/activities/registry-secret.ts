// Registry credentials from a `kubernetes.io/dockerconfigjson` Secret in the control plane, as
// upstream lifecycle-manager's `--oci-registry-cred-secret` takes them: the setting names the
// Secret (in `kcp-system` unless a namespace is given), its `.dockerconfigjson` holds `auths` by
// registry host, and a registry gets the entry of its host (anonymous access otherwise). The
// worker keeps the Secret through a watch, so a changed or rotated Secret is used at once.
import type { KubeObject } from '../api/shared';
import { Informer } from '../k8s/informer';
import type { KubeClient } from '../k8s/rest-client';
import { parseDockerConfig, type Credentials } from '../oci/auth';
import { Registries, type CredentialSource } from '../oci/registries';
import type { RegistryConfig } from '../infra/config';

/** Upstream's control-plane namespace (`shared.DefaultControlPlaneNamespace`). */
export const DEFAULT_CRED_SECRET_NAMESPACE = 'kcp-system';

export interface SecretRef {
  namespace: string;
  name: string;
}

/** `name` (in kcp-system) or `namespace/name`. */
export function parseSecretRef(value: string, defaultNamespace = DEFAULT_CRED_SECRET_NAMESPACE): SecretRef {
  const v = value.trim();
  const slash = v.indexOf('/');
  const ref =
    slash < 0 ? { namespace: defaultNamespace, name: v } : { namespace: v.slice(0, slash), name: v.slice(slash + 1) };
  if (!ref.name || !ref.namespace || ref.name.includes('/'))
    throw new Error(`not a Secret reference: "${value}" (use <name> or <namespace>/<name>)`);
  return ref;
}

const DOCKER_HUB = new Set(['docker.io', 'registry-1.docker.io', 'index.docker.io']);

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

/** What a Secret yields: credentials by host, or why it cannot be used. Never the content. */
function readSecret(
  secret: Secret | undefined,
  describe: string,
): { auths?: Map<string, Credentials>; problem?: string } {
  if (!secret) return { problem: `${describe} does not exist` };
  const data = secret.data?.['.dockerconfigjson'];
  if (secret.type !== 'kubernetes.io/dockerconfigjson' || !data) {
    return { problem: `${describe} is not of type kubernetes.io/dockerconfigjson with a .dockerconfigjson key` };
  }
  try {
    const auths = parseDockerConfig(Buffer.from(data, 'base64').toString('utf8'));
    if (auths.size === 0) return { problem: `${describe} has no usable entry in auths` };
    return { auths };
  } catch (err) {
    // The parser's message names no credential, but keep it generic all the same.
    return {
      problem: `${describe} holds no valid docker config JSON (${err instanceof SyntaxError ? 'not JSON' : (err as Error).message})`,
    };
  }
}

export class RegistryCredentialSecret implements CredentialSource {
  readonly describe: string;
  private state?: { auths?: Map<string, Credentials>; problem?: string };
  private lookedUp?: { at: number; state: Promise<{ auths?: Map<string, Credentials>; problem?: string }> };
  private watching = false;

  /** How long a lookup without the watch is re-used. */
  static readonly TTL_MS = 5000;

  constructor(
    private readonly kcp: KubeClient,
    readonly ref: SecretRef,
  ) {
    this.describe = `Secret ${ref.namespace}/${ref.name}`;
  }

  /** How long `watch` waits for the first list before it goes on (lookups by GET meanwhile). */
  static readonly SYNC_WAIT_MS = 10_000;

  /**
   * Keeps the Secret through a watch on it alone; returns the function that stops the watch. A
   * watch that cannot list (no permission yet, API server away) does not hold the worker back:
   * lookups read the Secret directly until the watch has listed.
   */
  async watch(): Promise<() => void> {
    const informer = new Informer(this.kcp, {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: this.ref.namespace,
      fieldSelector: `metadata.name=${this.ref.name}`,
      onEvent: (type, s) => {
        this.state = readSecret(type === 'DELETED' ? undefined : s, this.describe);
      },
    });
    let stopped = false;
    const synced = informer.start().then(() => {
      if (stopped) return;
      // The first list delivered nothing: the Secret does not exist (yet).
      this.state ??= readSecret(undefined, this.describe);
      this.watching = true;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      synced,
      new Promise<void>((r) => (timer = setTimeout(r, RegistryCredentialSecret.SYNC_WAIT_MS))),
    ]);
    clearTimeout(timer);
    return () => {
      stopped = true;
      this.watching = false;
      informer.stop();
    };
  }

  async credentialsFor(host: string): Promise<Credentials | undefined> {
    const state = this.watching && this.state ? this.state : await this.lookup();
    if (state.problem) throw new Error(state.problem);
    const h = host.toLowerCase();
    // Docker Hub's credentials sit under index.docker.io, as docker and go-containerregistry keep them.
    return state.auths?.get(h) ?? (DOCKER_HUB.has(h) ? state.auths?.get('index.docker.io') : undefined);
  }

  private async lookup() {
    if (this.lookedUp && Date.now() - this.lookedUp.at < RegistryCredentialSecret.TTL_MS)
      return await this.lookedUp.state;
    const state = this.kcp
      .get<Secret>('v1', 'Secret', this.ref.name, this.ref.namespace)
      .then((s) => readSecret(s, this.describe));
    this.lookedUp = { at: Date.now(), state };
    state.catch(() => (this.lookedUp = undefined));
    return await state;
  }
}

/**
 * The worker's `Registries` from its configuration: extra CA, insecure hosts, and the credential
 * Secret (watched until `stop`).
 */
export async function registriesFromConfig(
  kcp: KubeClient,
  config: RegistryConfig,
): Promise<{ registries: Registries; credentials?: RegistryCredentialSecret; stop(): void }> {
  const credentials = config.credSecret
    ? new RegistryCredentialSecret(kcp, parseSecretRef(config.credSecret))
    : undefined;
  const registries = new Registries({
    ...(config.caFile ? { caFile: config.caFile } : {}),
    insecureHosts: config.insecureHosts,
    ...(credentials ? { credentials } : {}),
  });
  const stop = credentials ? await credentials.watch() : () => undefined;
  return { registries, ...(credentials ? { credentials } : {}), stop };
}
