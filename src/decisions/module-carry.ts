// How a module's install is carried across continue-as-new: the rendered layer left out when it
// is the fetched one (it nearly always is), so that a Kyma of a thousand modules fits Temporal's
// payload limit, and put back when the next run starts.
import type { Installed } from '../contract/module';
import type { CarriedInstalled } from '../contract/workflow-inputs';

/** An install as carried: the rendered layer left out when it is the fetched one. */
export function compactInstall(i: Installed): CarriedInstalled {
  if (JSON.stringify(i.rendered.layer) !== JSON.stringify(i.fetched.layer)) return i;
  const { layer: _, ...rendered } = i.rendered;
  return { ...i, rendered };
}

/** An install as carried, whole again. */
export function uncompactInstall(i: CarriedInstalled): Installed {
  return { ...i, rendered: { ...i.rendered, layer: i.rendered.layer ?? i.fetched.layer } };
}
