// The images a module's manifest runs, as modulectl 3.2.0 finds them
// (internal/service/contentprovider/manifest.go): in Deployments and StatefulSets, each container's
// and init container's `image`, and the env values that look like image references. Each is
// checked (src/publish/image-reference.ts); modulectl stops at the first bad one, this lists all.
import { isImageCandidate, parseImage, type ImageInfo } from './image-reference';

interface Workload {
  kind?: unknown;
  metadata?: { name?: unknown };
  spec?: { template?: { spec?: Record<string, unknown> } };
}

interface Container {
  name?: unknown;
  image?: unknown;
  env?: { name?: unknown; value?: unknown }[];
}

export interface ManifestImages {
  /** Sorted by reference (modulectl's order is a Go map's, so random). */
  images: ImageInfo[];
  problems: string[];
}

export function manifestImages(objects: unknown[]): ManifestImages {
  const found = new Map<string, ImageInfo>();
  const problems: string[] = [];
  const check = (value: unknown, where: string) => {
    if (typeof value !== 'string' || !isImageCandidate(value) || found.has(value)) return;
    const parsed = parseImage(value);
    if ('problem' in parsed) problems.push(`${where}: the image "${value}" ${parsed.problem}`);
    else found.set(value, parsed);
  };
  for (const o of objects as (Workload | null)[]) {
    if (o?.kind !== 'Deployment' && o?.kind !== 'StatefulSet') continue;
    for (const list of ['containers', 'initContainers']) {
      const containers = o.spec?.template?.spec?.[list];
      if (!Array.isArray(containers)) continue;
      for (const c of containers as (Container | null)[]) {
        const at = `${o.kind} ${String(o.metadata?.name)}, ${list} ${String(c?.name)}`;
        check(c?.image, at);
        if (Array.isArray(c?.env)) for (const e of c.env) check(e?.value, `${at}, env ${String(e?.name)}`);
      }
    }
  }
  const images = [...found.values()].sort((a, b) =>
    a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0,
  );
  return { images, problems };
}
