// Kubernetes Events on the Kyma, one per lifecycle step.
import type { KymaEvent } from '../api/events';
import { FIELD_MANAGER } from '../api/identity';
import { API_VERSION } from '../api/shared';
import type { KymaRef } from '../contract/kyma';
import type { KubeClient } from '../k8s/rest-client';

export interface RecordKymaEventInput {
  kyma: KymaRef;
  uid: string;
  event: KymaEvent;
}

export function eventActivities(kcp: KubeClient) {
  return {
    async recordKymaEvent({ kyma, uid, event }: RecordKymaEventInput): Promise<void> {
      const now = new Date().toISOString();
      await kcp.create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {
          name: `${kyma.name.slice(0, 200)}.${Date.now().toString(16)}${Math.random().toString(16).slice(2, 8)}`,
          namespace: kyma.namespace,
        },
        involvedObject: { apiVersion: API_VERSION, kind: 'Kyma', name: kyma.name, namespace: kyma.namespace, uid },
        type: event.type,
        reason: event.reason,
        message: event.message.slice(0, 1024),
        source: { component: FIELD_MANAGER },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      });
    },
  };
}
