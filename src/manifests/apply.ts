// A manifest's objects into a cluster, in order: CRDs (then wait until they are Established),
// namespaces, the namespaces the rest needs and the manifest does not define, then the rest;
// a few at a time within each step. The worker and klm's direct installs each say how one object
// is applied (labels, field manager, how a refusal reads) and how long a CRD may take.
import type { KubeObject } from '../api/shared';
import { inBatches } from './batches';
import { applyOrder } from './order';

export interface ApplySteps {
  /**
   * Applies one object; returns the API server's answer, or nothing when the object was taken
   * care of elsewhere (the worker's cluster-scoped objects that another install applies: a CRD
   * then already Established).
   */
  apply: (o: KubeObject) => Promise<KubeObject | undefined>;
  /** Waits until the applied CRDs (their apply answers) are Established. */
  established: (crds: KubeObject[]) => Promise<void>;
  /** Makes sure a namespace the objects need but do not define exists. */
  ensureNamespace: (name: string) => Promise<void>;
}

export async function applyInOrder(objects: KubeObject[], steps: ApplySteps): Promise<void> {
  const { crds, namespaces, referenced, rest } = applyOrder(objects);
  const answers: KubeObject[] = [];
  await inBatches(crds, async (o) => {
    const answer = await steps.apply(o);
    if (answer) answers.push(answer);
  });
  await steps.established(answers);
  await inBatches(namespaces, steps.apply);
  await inBatches(referenced, steps.ensureNamespace);
  await inBatches(rest, steps.apply);
}
