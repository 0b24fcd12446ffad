// A layer's raw manifest parsed once per worker, not once per install: a module's version
// installs in many Kymas, and parsing YAML is slow (0.5 s of the worker's main thread's 18.4 s
// busy in a profile of 20 Kymas × 3 modules). Layers are content-addressed, so an entry never
// goes stale; each use gets its own copy, which the render then places and labels. Only small
// layers are kept, and only a few, so that the cache stays within a few megabytes whatever the
// modules.
import type { KubeObject } from '../../api/shared';
import { manifestObjects } from '../../manifests/parse';

/** Layers kept at most. */
const MAX_LAYERS = 16;
/** The largest raw manifest kept (characters). */
const MAX_MANIFEST = 256 * 1024;

export class ParsedLayers {
  private readonly layers = new Map<string, KubeObject[]>();

  /** The objects of layer `digest`, whose raw manifest is `manifest`, as its documents hold them: a copy of its own. */
  objects(digest: string, manifest: string): KubeObject[] {
    const kept = this.layers.get(digest);
    if (kept) {
      // Most recently used last: the first entry is the one to drop.
      this.layers.delete(digest);
      this.layers.set(digest, kept);
      return structuredClone(kept);
    }
    const objects = manifestObjects(manifest);
    if (manifest.length > MAX_MANIFEST) return objects;
    this.layers.set(digest, structuredClone(objects));
    if (this.layers.size > MAX_LAYERS) this.layers.delete(this.layers.keys().next().value!);
    return objects;
  }
}
