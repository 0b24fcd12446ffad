// The bridge: stateless routing from Kubernetes watches to Temporal signals. It decides
// nothing. Kyma events start or poke the Kyma's workflow (signalWithStart); ModuleTemplate
// and ModuleReleaseMeta events poke every Kyma workflow of their namespace; events on
// module CRs and manager workloads in target clusters poke the owning module workflow.
import type { Client } from '@temporalio/client';
import { MANAGED_BY } from '../api/identity';
import { kymaWorkflowId, moduleWorkflowId, OWNED_BY_ANNOTATION, parseOwnedBy, RESOURCE_KIND_ANNOTATION } from '../api/names';
import { SA } from '../api/search-attributes';
import { API_VERSION, LABELS, type KubeObject } from '../api/shared';
import { WORKFLOW_TASK_TIMEOUT, type ReconcileSettings } from '../contract/settings';
import { kymaChanged, resourceChanged, templatesChanged } from '../contract/signals';
import { KYMA_WORKFLOW, type KymaWorkflowInput } from '../contract/workflow-inputs';
import { Informer, type InformerEventType } from '../k8s/informer';
import type { KubeClient } from '../k8s/rest-client';
import { clientFromSecret, kubeconfigKey } from '../k8s/target-cluster';
import { readinessFingerprint, withoutStatus } from './readiness-change';
import { Signaller } from './signaller';

const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;
const CONTROL_PLANE = 'control-plane';

export interface BridgeOptions {
  kcp: KubeClient;
  temporal: Client;
  taskQueue: string;
  settings: ReconcileSettings;
  relistMs?: number;
  log?: (msg: string) => void;
}

/**
 * The watches on one target cluster: manager workloads (ours, by label) and every object of
 * each module CR kind (the user's too: those block a module's removal).
 */
class TargetWatches {
  private readonly informers = new Map<string, Informer>();
  /** Module workflows per CR kind, for objects that carry no owner annotation. */
  readonly subscribers = new Map<string, Set<string>>();

  /** Readiness fingerprint per object uid, as last seen. */
  private readonly seen = new Map<string, string>();

  constructor(readonly client: KubeClient, private readonly onEvent: (type: InformerEventType, obj: KubeObject, t: TargetWatches) => void, private readonly relistMs?: number, private readonly onError?: (e: unknown) => void) {
    this.watch('apps/v1', 'Deployment', MANAGED);
    this.watch('apps/v1', 'StatefulSet', MANAGED);
  }

  /**
   * Whether an event is news to a module workflow: a deletion always is; a fresh object of
   * ours without status is not (its workflow just applied it); else only a changed
   * readiness fingerprint is.
   */
  changed(type: InformerEventType, o: KubeObject, ours: boolean): boolean {
    const uid = o.metadata.uid ?? `${o.metadata.namespace}/${o.metadata.name}`;
    if (type === 'DELETED') {
      this.seen.delete(uid);
      return true;
    }
    const print = readinessFingerprint(o);
    const before = this.seen.get(uid);
    this.seen.set(uid, print);
    if (before === undefined) return !(ours && withoutStatus(o));
    return before !== print;
  }

  subscribe(apiVersion: string, kind: string, workflowId: string, on: boolean): void {
    const key = `${apiVersion}/${kind}`;
    const set = this.subscribers.get(key) ?? new Set<string>();
    if (on) set.add(workflowId);
    else set.delete(workflowId);
    this.subscribers.set(key, set);
    if (on) this.watch(apiVersion, kind);
  }

  private watch(apiVersion: string, kind: string, labelSelector?: string): void {
    const key = `${apiVersion}/${kind}`;
    if (this.informers.has(key)) return;
    const inf = new Informer(this.client, { apiVersion, kind, labelSelector, relistMs: this.relistMs, onEvent: (type, o) => this.onEvent(type, o, this), onError: this.onError });
    this.informers.set(key, inf);
    void inf.start();
  }

  stop(): void {
    for (const i of this.informers.values()) i.stop();
  }
}

export class Bridge {
  private readonly signaller: Signaller;
  private readonly informers: Informer[] = [];
  private readonly targets = new Map<string, TargetWatches>();
  /** What of each Kyma the workflow acts on, as last signalled: status writes alone are not news. */
  private readonly kymaSeen = new Map<string, string>();
  /** The skip-reconciliation label last seen per Manifest: a flip pokes its module workflow. */
  private readonly manifestPaused = new Map<string, boolean>();
  private kymas!: Informer;
  private secrets!: Informer;

  constructor(private readonly o: BridgeOptions) {
    this.signaller = new Signaller((err, key) => o.log?.(`signal ${key} failed: ${(err as Error).message}`));
  }

  get stats(): { sent: number; failed: number } {
    return { sent: this.signaller.sent, failed: this.signaller.failed };
  }

  async start(): Promise<void> {
    const { kcp } = this.o;
    const onError = (e: unknown) => this.o.log?.(`watch error: ${(e as Error).message}`);
    this.secrets = new Informer(kcp, { apiVersion: 'v1', kind: 'Secret', labelSelector: LABELS.kymaName, relistMs: this.o.relistMs, onEvent: () => undefined, onError });
    await this.secrets.start();
    this.kymas = new Informer(kcp, { apiVersion: API_VERSION, kind: 'Kyma', relistMs: this.o.relistMs, onEvent: (t, k) => this.onKyma(t, k), onError });
    const templates = (t: string, o: KubeObject) => this.onTemplates(o.metadata.namespace ?? '');
    const manifests = new Informer(kcp, { apiVersion: API_VERSION, kind: 'Manifest', relistMs: this.o.relistMs, onEvent: (t, m) => this.onManifest(t, m), onError });
    this.informers.push(
      this.secrets,
      this.kymas,
      new Informer(kcp, { apiVersion: API_VERSION, kind: 'ModuleTemplate', relistMs: this.o.relistMs, onEvent: templates, onError }),
      new Informer(kcp, { apiVersion: API_VERSION, kind: 'ModuleReleaseMeta', relistMs: this.o.relistMs, onEvent: templates, onError }),
      manifests,
    );
    await Promise.all(this.informers.slice(1).map((i) => i.start()));
  }

  async stop(): Promise<void> {
    for (const i of this.informers) i.stop();
    for (const t of this.targets.values()) t.stop();
    await this.signaller.idle();
  }

  private onKyma(type: InformerEventType, k: KubeObject): void {
    const ns = k.metadata.namespace!;
    const name = k.metadata.name;
    const workflowId = kymaWorkflowId(ns, name);
    const { temporal, taskQueue, settings } = this.o;
    if (type === 'DELETED') {
      // Gone for good (our finalizer was dropped): poke, never start.
      this.kymaSeen.delete(workflowId);
      this.signaller.submit(`${workflowId}#kymaChanged`, () => temporal.workflow.getHandle(workflowId).signal(kymaChanged));
      return;
    }
    // The workflow's own status writes come back as events too; only spec (generation),
    // labels, finalizers and deletion are news to it (its drift timer covers anything missed).
    const meta = k.metadata;
    const seen = JSON.stringify([meta.uid, meta.generation, meta.labels, meta.finalizers, meta.deletionTimestamp]);
    if (type === 'MODIFIED' && this.kymaSeen.get(workflowId) === seen) return;
    this.kymaSeen.set(workflowId, seen);
    this.signaller.submit(`${workflowId}#kymaChanged`, () =>
      temporal.workflow.signalWithStart<(input: KymaWorkflowInput) => Promise<void>, []>(KYMA_WORKFLOW, {
        workflowId,
        taskQueue,
        args: [{ kyma: { namespace: ns, name }, settings }],
        signal: kymaChanged,
        signalArgs: [],
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
        typedSearchAttributes: [
          { key: SA.KymaName, value: name },
          { key: SA.KymaNamespace, value: ns },
        ],
      }),
    );
  }

  private onTemplates(namespace: string): void {
    for (const k of this.kymas?.list() ?? []) {
      if (k.metadata.namespace !== namespace) continue;
      const workflowId = kymaWorkflowId(namespace, k.metadata.name);
      this.signaller.submit(`${workflowId}#templatesChanged`, () => this.o.temporal.workflow.getHandle(workflowId).signal(templatesChanged));
    }
  }

  /** Makes sure the Manifest's target cluster is watched for its CR kind, and who listens. */
  private onManifest(type: InformerEventType, m: KubeObject): void {
    const meta = m.metadata;
    const kyma = meta.labels?.[LABELS.kymaName];
    const module = meta.labels?.[LABELS.moduleName];
    const resourceKind = meta.annotations?.[RESOURCE_KIND_ANNOTATION];
    if (!kyma || !module) return;
    const workflowId = moduleWorkflowId(m.metadata.namespace!, kyma, module);
    const paused = meta.labels?.[LABELS.skipReconciliation] === 'true';
    if (type === 'DELETED') this.manifestPaused.delete(workflowId);
    else if ((this.manifestPaused.get(workflowId) ?? false) !== paused) {
      this.manifestPaused.set(workflowId, paused);
      this.signaller.submit(`${workflowId}#resourceChanged`, () => this.o.temporal.workflow.getHandle(workflowId).signal(resourceChanged));
    }
    if (!resourceKind) return;
    const slash = resourceKind.lastIndexOf('/');
    void this.targetFor(m.metadata.namespace!, kyma).then(
      (t) => t.subscribe(resourceKind.slice(0, slash), resourceKind.slice(slash + 1), workflowId, type !== 'DELETED'),
      (err: unknown) => this.o.log?.(`target cluster of Kyma ${m.metadata.namespace}/${kyma}: ${(err as Error).message}`),
    );
  }

  private async targetFor(namespace: string, kyma: string): Promise<TargetWatches> {
    const secret = this.secrets.list().find((s) => s.metadata.namespace === namespace && s.metadata.labels?.[LABELS.kymaName] === kyma);
    // Kymas whose Secrets hold the same kubeconfig share the watches on that cluster.
    const key = secret ? kubeconfigKey(secret) : CONTROL_PLANE;
    let t = this.targets.get(key);
    if (!t) {
      const client = secret ? await clientFromSecret(secret) : this.o.kcp;
      t = this.targets.get(key) ?? new TargetWatches(client, (type, o, tw) => this.onTargetObject(type, o, tw), this.o.relistMs);
      this.targets.set(key, t);
    }
    return t;
  }

  private onTargetObject(type: InformerEventType, o: KubeObject, t: TargetWatches): void {
    const owner = parseOwnedBy(o.metadata.annotations?.[OWNED_BY_ANNOTATION]);
    if (!t.changed(type, o, owner !== undefined)) return;
    const ids = owner ? [moduleWorkflowId(owner.namespace, owner.kyma, owner.module)] : [...(t.subscribers.get(`${o.apiVersion}/${o.kind}`) ?? [])];
    for (const workflowId of ids) {
      this.signaller.submit(`${workflowId}#resourceChanged`, () => this.o.temporal.workflow.getHandle(workflowId).signal(resourceChanged));
    }
  }
}
