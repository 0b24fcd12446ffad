// Apply: server-side apply with a fixed field manager and force, in the order of src/manifests
// (CRDs, then wait until they are Established, bounded by the configured timeout, then a typed
// failure; namespaces next; then everything else). Re-applying the same objects changes nothing.
import { createHash } from 'node:crypto';
import { heartbeat } from '@temporalio/activity';
import { heartbeating } from '../heartbeating';
import { MANAGED_BY } from '../../api/identity';
import { describeObject, OWNED_BY_ANNOTATION, ownedBy } from '../../api/names';
import { groupOf, idOf, objectKey } from '../../api/object-id';
import { LABELS, type KubeObject } from '../../api/shared';
import type { RenderParams } from '../../contract/artifacts';
import { KubeApiError } from '../../k8s/request-errors';
import { type KubeClient } from '../../k8s/rest-client';
import { applyInOrder } from '../../manifests/apply';
import { waitEstablished } from '../../k8s/crds';
import { createNamespace } from '../../manifests/namespaces';
import { isNamespace } from '../../manifests/order';
import { permanent, transient } from '../failure';
import { refusesCredentials } from '../target';
import { noteFound, shipsSystemNamespace } from './ownership';
import { identify } from './render';

export function describe(o: KubeObject): string {
  return describeObject(o.kind, o.metadata.name, o.metadata.namespace);
}

/**
 * An object the API server forbids the kubeconfig's identity to write: which permission is
 * missing (the verb as the server names it, else the one the write needs), and how to grant it.
 */
function forbidden(err: KubeApiError, o: KubeObject, verb: string): string {
  const said = /cannot (\S+) resource/.exec(err.message)?.[1] ?? verb;
  const resource = err.details.kind ?? `${o.kind.toLowerCase()}s`;
  const group = err.details.group ?? groupOf(o.apiVersion);
  const scope = o.metadata.namespace ? `in namespace ${o.metadata.namespace}` : 'at cluster scope';
  const needs = verb === 'patch' ? ' (server-side apply needs create and patch)' : '';
  const of = group ? `of API group "${group}"` : 'of the core API group';
  return (
    `applying ${describe(o)}: the identity of the target cluster's kubeconfig may not ${said} ` +
    `${resource} ${of} ${scope}${needs}: grant it with a ` +
    `${o.metadata.namespace ? 'Role or ClusterRole' : 'ClusterRole'} bound to that identity, or ` +
    `use a kubeconfig whose identity may install modules (the API server said: ${err.message})`
  );
}

/**
 * API errors a retry cannot fix become non-retryable failures with the server's message; refused
 * credentials stay as they are, for `onTarget` to type as every target step's. `verb`: what the
 * write is (`patch` for server-side apply, `create`).
 */
export function applyFailure(err: unknown, o: KubeObject, verb: 'patch' | 'create' = 'patch'): Error {
  if (refusesCredentials(err)) return err;
  if (err instanceof KubeApiError && err.status === 404) {
    return permanent(
      'KindNotServed',
      `applying ${describe(o)}: the target cluster does not serve ${o.kind} in ${o.apiVersion}; ` +
        `the module's manifest must define its CustomResourceDefinition, or use a kind the cluster ` +
        `serves`,
    );
  }
  if (err instanceof KubeApiError && err.status === 403) return permanent('ApplyRejected', forbidden(err, o, verb));
  if (
    err instanceof KubeApiError &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 429 &&
    err.status !== 409
  ) {
    return permanent('ApplyRejected', `applying ${describe(o)}: ${err.message}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

type Identity = Pick<RenderParams, 'kymaNamespace' | 'kymaName' | 'module'>;

/**
 * What this worker did, or is doing, on each cluster (by client): not done again within a minute
 * of its end, and joined while it runs. A thousand installs of a module into one cluster that
 * start together apply its CRD once, not once each before the first of them ends.
 */
/** A run of OncePerCluster: under way, or ended at `at`. */
type Run = { flight: Promise<unknown> } | { at: number };

class OncePerCluster {
  private readonly done = new WeakMap<KubeClient, Map<string, Run>>();

  /** Runs `fn` for `key` on `client`'s cluster, unless it ran there within the last minute; joins a run under way. */
  async once(client: KubeClient, key: string, fn: () => Promise<unknown>): Promise<void> {
    const done = this.done.get(client) ?? new Map<string, Run>();
    this.done.set(client, done);
    const seen = done.get(key);
    if (seen && 'flight' in seen) {
      await heartbeating(seen.flight);
      return;
    }
    if (seen && seen.at + RECENT_MS > Date.now()) return;
    const entry = { flight: fn() };
    done.set(key, entry);
    // A forget() while it ran (objects deleted meanwhile) leaves it forgotten.
    const current = () => this.done.get(client) === done && done.get(key) === entry;
    try {
      await entry.flight;
      if (current()) done.set(key, { at: Date.now() });
    } catch (err) {
      if (current()) done.delete(key);
      throw err;
    }
  }

  /** Forgets one key of `client`'s cluster, or all of them. */
  forget(client: KubeClient, key?: string): void {
    if (key === undefined) this.done.delete(client);
    else this.done.get(client)?.delete(key);
  }
}

/** How long a namespace seen, or a cluster-scoped object applied, is taken as done. */
const RECENT_MS = 60_000;
/** Namespaces this worker saw exist on a cluster. */
const namespacesKnown = new OncePerCluster();

/** The object as the API server answered the apply. */
async function applyOne(client: KubeClient, o: KubeObject, who: Identity): Promise<KubeObject> {
  try {
    if (o.metadata.namespace && !(await client.isNamespaced(o.apiVersion, o.kind))) {
      // A kind of cluster scope that render could not know: shared, like the others.
      o = { ...o, metadata: { ...o.metadata, namespace: undefined } };
      identify(o, who);
    }
    return await client.apply(o);
  } catch (err) {
    throw writeFailure(client, err, o);
  }
}

/** applyFailure, but a namespace deleted since this worker saw it is forgotten and the write retried (the retry creates it again). */
export function writeFailure(
  client: KubeClient,
  err: unknown,
  o: KubeObject,
  verb: 'patch' | 'create' = 'patch',
): Error {
  const ns = o.metadata.namespace;
  if (
    ns &&
    err instanceof KubeApiError &&
    err.status === 404 &&
    err.message.startsWith(`namespaces "${ns}" not found`)
  ) {
    namespacesKnown.forget(client, ns);
    return transient(
      'ApplyRejected',
      `applying ${describe(o)}: namespace ${ns} was deleted meanwhile; creating it again`,
    );
  }
  return applyFailure(err, o, verb);
}

/**
 * Creates a namespace the module's objects need but do not define (such as kyma-system),
 * labelled and annotated like every object we apply. Created once, never re-applied: the
 * modules of a Kyma that share it do not take it from each other. One create (an existing one
 * answers 409), and none for a minute after this worker saw it on the cluster.
 */
export async function ensureNamespace(client: KubeClient, name: string, who: Identity): Promise<void> {
  const ns: KubeObject = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.kymaName]: who.kymaName, [LABELS.moduleName]: who.module },
      annotations: { [OWNED_BY_ANNOTATION]: ownedBy(who.kymaNamespace, who.kymaName, who.module) },
    },
  };
  await namespacesKnown.once(client, name, () =>
    createNamespace(client, ns).catch((err: unknown) => {
      throw applyFailure(err, ns, 'create');
    }),
  );
}

/**
 * Cluster-scoped objects (CRDs, cluster roles and their bindings) this worker applied, per
 * cluster client, by kind, name and content: every installation of a module in a cluster
 * applies the very same ones, and a thousand of them applying the same CRD at once is what makes
 * API servers time out. While one install applies it the others wait for that apply; within a
 * minute of it the same object is not applied again; a changed one is, and so is every one of a
 * cluster after a removal deleted some (`forgetShared`).
 */
const sharedApplied = new OncePerCluster();

/** Objects of `client`'s cluster were deleted: apply its cluster-scoped ones again next time. */
export function forgetShared(client: KubeClient): void {
  sharedApplied.forget(client);
}

/** What an apply did beyond the objects: the resourceVersions they have, what it left alone. */
export interface Applied {
  /** The resourceVersion each namespaced object has after the apply, by objectKey. */
  versions: Map<string, string>;
  /** System namespaces the manifest ships, not applied (`Namespace kube-system`). */
  leftAlone: string[];
}

/**
 * Applies rendered objects to clusters: CRDs first (then waits until they are Established),
 * namespaces, then the rest; cluster-scoped objects this worker applied within the last minute
 * are skipped, and one it is applying for another install is waited for, not applied again.
 * An object not applied before (not in `known`: objectKeys of any version) that the cluster has
 * already gets a record of what it had first (./ownership.ts); system namespaces are left alone.
 */
export class Applier {
  async apply(
    client: KubeClient,
    objects: KubeObject[],
    who: Identity,
    crdTimeoutMs: number,
    known: Set<string> = new Set(),
  ): Promise<Applied> {
    const keyOf = (o: KubeObject) =>
      `${o.kind}/${o.metadata.name}@${createHash('sha256').update(JSON.stringify(o)).digest('hex')}`;
    const shared = (o: KubeObject) => o.metadata.namespace === undefined && !isNamespace(o);
    const established = (crds: KubeObject[]) =>
      waitEstablished(client, crds, {
        timeoutMs: crdTimeoutMs,
        onWait: heartbeat,
        timedOut: (pending) =>
          permanent(
            'CrdNotEstablished',
            `CRD not established within ${Math.round(crdTimeoutMs / 1000)}s: ${pending.join(', ')}`,
          ),
      });
    // Namespaces of the manifest this apply found absent, and so creates: nothing in them is
    // anyone else's, so their objects are not looked for before their first apply.
    const created = new Set<string>();
    const step = async (o: KubeObject) => {
      heartbeat();
      const inCreated = o.metadata.namespace !== undefined && created.has(o.metadata.namespace);
      if (!inCreated && !known.has(objectKey(idOf(o), true))) {
        const found = await noteFound(client, o, who).catch((err: unknown) => {
          throw writeFailure(client, err, o);
        });
        if (!found && isNamespace(o)) created.add(o.metadata.name);
      }
      return await applyOne(client, o, who);
    };
    const versions = new Map<string, string>();
    const leftAlone: string[] = [];
    await applyInOrder(objects, {
      apply: async (o) => {
        // Shared with the cluster's other installs: applied once (a CRD until Established), joined meanwhile.
        if (shared(o)) {
          const crd = o.kind === 'CustomResourceDefinition';
          await sharedApplied.once(client, keyOf(o), async () => (crd ? established([await step(o)]) : step(o)));
          return undefined;
        }
        if (await shipsSystemNamespace(client, o)) {
          leftAlone.push(describe(o));
          return undefined;
        }
        const answer = await step(o);
        if (answer.metadata.namespace && answer.metadata.resourceVersion)
          versions.set(
            objectKey({ ...idOf(answer), apiVersion: o.apiVersion, kind: o.kind }),
            answer.metadata.resourceVersion,
          );
        return answer;
      },
      established,
      ensureNamespace: (n) => ensureNamespace(client, n, who),
    });
    return { versions, leftAlone };
  }
}
