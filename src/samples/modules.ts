// The sample modules (examples/modules: greeter 1.0.0 and 1.1.0, counter 1.0.0, faulty 1.0.0 to 3.0.0), loaded from
// disk and published to a registry and a control-plane namespace.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { KubeClient } from '../k8s/rest-client';
import {
  moduleReleaseMeta,
  moduleTemplate,
  pushModuleVersion,
  type ModuleVersion,
  type OciRegistryClient,
  type PushTarget,
} from '../publish/module';

export const MODULES_DIR = fileURLToPath(new URL('../../examples/modules/', import.meta.url));

/** The kinds of the sample modules' CRs (the sample manager acts on them). */
export const SAMPLE_KINDS = [
  { apiVersion: 'greeter.example.io/v1alpha1', kind: 'Greeter' },
  { apiVersion: 'counter.example.io/v1alpha1', kind: 'Counter' },
];

interface ModuleFile {
  name: string;
  component: string;
  /** What the ModuleTemplates' spec.descriptor holds (see ModuleVersion); default `{}`, as modulectl 2.3 and later. */
  descriptor?: ModuleVersion['descriptor'];
  layer?: 'tar' | 'yaml';
  defaultCR?: Record<string, unknown>;
  channels: Record<string, string>;
}

/** The sample modules: every version, and each module's channels. */
export async function loadSamples(
  dir = MODULES_DIR,
): Promise<{ versions: ModuleVersion[]; channels: Record<string, Record<string, string>> }> {
  const versions: ModuleVersion[] = [];
  const channels: Record<string, Record<string, string>> = {};
  for (const name of (await readdir(dir)).sort()) {
    const meta = parse(await readFile(path.join(dir, name, 'module.yaml'), 'utf8')) as ModuleFile;
    channels[meta.name] = meta.channels;
    for (const v of (await readdir(path.join(dir, name))).filter((f) => /^\d+\.\d+\.\d+/.test(f)).sort()) {
      versions.push({
        name: meta.name,
        component: meta.component,
        version: v,
        manifest: await readFile(path.join(dir, name, v, 'manifest.yaml'), 'utf8'),
        ...(meta.defaultCR ? { defaultCR: meta.defaultCR } : {}),
        descriptor: meta.descriptor ?? 'empty',
        layer: meta.layer ?? 'tar',
      });
    }
  }
  return { versions, channels };
}

/**
 * Publishes every sample module version and creates their templates and release metas, as
 * modulectl and the OCM tooling do: the component in the registry (under the target's subpath),
 * ModuleTemplates with `descriptor: {}` (or the form the module's module.yaml asks for), and
 * ModuleReleaseMetas naming the component (`ocmComponentName`). `descriptor` overrides every
 * module's form; `client` pushes with trust and credentials.
 */
export async function publishSamples(
  kcp: KubeClient,
  registry: string | PushTarget,
  namespace: string,
  opts: { descriptor?: ModuleVersion['descriptor']; client?: OciRegistryClient } = {},
): Promise<string[]> {
  const { versions, channels } = await loadSamples();
  const published: string[] = [];
  for (const sample of versions) {
    const m = opts.descriptor ? { ...sample, descriptor: opts.descriptor } : sample;
    const descriptor = await pushModuleVersion(registry, m, opts.client);
    await kcp.apply(moduleTemplate(m, namespace, descriptor));
    published.push(`${m.name}-${m.version}`);
  }
  for (const [name, ch] of Object.entries(channels)) {
    const component = versions.find((v) => v.name === name)!.component;
    await kcp.apply(moduleReleaseMeta(name, component, namespace, ch));
  }
  return published;
}
