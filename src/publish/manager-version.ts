// modulectl 3.2.0's version validation (internal/service/verifier; skipped unless
// --skip-version-validation=false): the Deployment or StatefulSet the config's `manager` names
// runs a container whose image is tagged with the module's version.
import { parseImage } from './image-reference';
import type { ModuleConfig } from './module-config';

interface Workload {
  kind?: unknown;
  metadata?: { name?: unknown };
  spec?: { template?: { spec?: { containers?: { image?: unknown }[] } } };
}

/** What is wrong, if anything; a config without a manager passes. */
export function managerVersionProblem(config: ModuleConfig, objects: unknown[]): string | undefined {
  const m = config.manager;
  if (!m) return undefined;
  const workloads = (objects as (Workload | null)[]).filter(
    (o): o is Workload =>
      (o?.kind === 'Deployment' || o?.kind === 'StatefulSet') && o.kind === m.kind && o.metadata?.name === m.name,
  );
  const tagged = workloads.some((w) =>
    (w.spec?.template?.spec?.containers ?? []).some((c) => {
      const image = typeof c?.image === 'string' ? parseImage(c.image) : undefined;
      return image !== undefined && !('problem' in image) && !image.digest && image.tag === config.version;
    }),
  );
  if (tagged) return undefined;
  return (
    `manager: no container of the ${m.kind} ${m.name} in the manifest runs an image tagged ` +
    `${config.version}, the module's version; tag the manager's image with it, or leave out ` +
    `--skip-version-validation=false`
  );
}
