// A namespace a manifest's objects are in but that it does not define (such as kyma-system).
import type { KubeObject } from '../api/shared';
import { KubeApiError } from '../k8s/request-errors';
import { type KubeClient } from '../k8s/rest-client';

/**
 * Creates the namespace once: one that exists is left as it is (its other users may have
 * labelled it), never re-applied. Other failures are the API server's, for the caller to type.
 */
export async function createNamespace(client: KubeClient, ns: KubeObject): Promise<void> {
  await client.create(ns).catch((err: unknown) => {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  });
}
