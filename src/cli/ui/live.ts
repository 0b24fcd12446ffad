// The web view's live updates: watches on the cluster, one set per open page, pushed as
// server-sent events (`changed`).
import type http from 'node:http';
import type { Kyma } from '../../api/kyma';
import { CLI_MANAGED_BY } from '../../api/identity';
import { API_VERSION, LABELS, type KubeObject } from '../../api/shared';
import type { KymaRef } from '../../contract/kyma';
import { Informer } from '../../k8s/informer';
import { recordOf } from '../direct-record';
import { installTargetOf } from '../kyma-modules';
import type { UiContext } from './api';

/**
 * One page's watches: the Kyma, klm's direct-install records, and what decides a direct install's
 * state (its manager workloads and its default CRs, whose kinds the records name: a new record's
 * kind is watched from then on). Any change is pushed as `changed`.
 */
export async function watchFor(c: UiContext, ref: KymaRef, onChange: () => void): Promise<{ stop(): void }> {
  const kyma = await c.kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
  const target = await installTargetOf(c.kube, ref, kyma).catch(() => c.kube);
  const own = `${LABELS.managedBy}=${CLI_MANAGED_BY}`;
  const informers: Informer[] = [];
  const watched = new Set<string>();
  const watch = (
    client: typeof target,
    apiVersion: string,
    kind: string,
    o: { namespace?: string; labelSelector?: string; fieldSelector?: string },
  ) => {
    const key = `${apiVersion}/${kind}/${o.namespace ?? ''}`;
    if (watched.has(key)) return;
    watched.add(key);
    const i = new Informer(client, { apiVersion, kind, ...o, onEvent: onChange, onError: () => undefined });
    informers.push(i);
    void i.start().catch(() => undefined);
  };
  watch(c.kube, API_VERSION, 'Kyma', { namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}` });
  watch(target, 'apps/v1', 'Deployment', { namespace: c.directNamespace, labelSelector: own });
  const records = new Informer(target, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: c.directNamespace,
    labelSelector: own,
    onEvent: (_type, cm) => {
      const cr = recordOf(cm)?.defaultCr;
      if (cr)
        watch(target, cr.apiVersion, cr.kind, {
          ...(cr.namespace ? { namespace: cr.namespace } : {}),
          labelSelector: own,
        });
      onChange();
    },
    onError: () => undefined,
  });
  informers.push(records);
  void records.start().catch(() => undefined);
  return { stop: () => informers.forEach((i) => i.stop()) };
}

/** The fleet page's watches: the namespace's Kymas and ModuleReleaseMetas (promotions). */
export function fleetWatch(c: UiContext, namespace: string, onChange: () => void): Promise<{ stop(): void }> {
  const informers = ['Kyma', 'ModuleReleaseMeta'].map(
    (kind) =>
      new Informer(c.kube, { apiVersion: API_VERSION, kind, namespace, onEvent: onChange, onError: () => undefined }),
  );
  for (const i of informers) void i.start().catch(() => undefined);
  return Promise.resolve({ stop: () => informers.forEach((i) => i.stop()) });
}

/** The open event streams, ended when the server closes. */
export class LiveStreams {
  private readonly open = new Set<http.ServerResponse>();

  /** Server-sent events: `changed` whenever the watches see a change, many at once made one after `quietMs`. */
  async stream(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    watch: (changed: () => void) => Promise<{ stop(): void }>,
    quietMs: number,
  ): Promise<void> {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    this.open.add(res);
    let timer: NodeJS.Timeout | undefined;
    const changed = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        res.write('event: changed\ndata: {}\n\n');
      }, quietMs);
    };
    const watches = await watch(changed);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 25_000);
    req.on('close', () => {
      clearInterval(keepAlive);
      clearTimeout(timer);
      watches.stop();
      this.open.delete(res);
    });
  }

  endAll(): void {
    for (const r of this.open) r.end();
  }
}
