// Where a direct install finds a module version's raw manifest: the link of the template's
// `rawManifest` resource (community modules, and modulectl's templates when the manifest was a
// URL), else its OCM component in a registry, as the lifecycle manager fetches it (the
// descriptor inline or named, or `descriptor: {}` with the ModuleReleaseMeta's ocmComponentName
// in the configured registry).
import type { ModuleReleaseMeta } from '../api/modulereleasemeta';
import type { ModuleTemplate } from '../api/moduletemplate';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { KubeClient } from '../k8s/rest-client';
import {
  configuredComponentLocation,
  DescriptorError,
  locateComponent,
  rawManifestOfComponent,
  type OcmRegistry,
} from '../oci/ocm';
import { OciError } from '../oci/registry-client';
import type { Registries } from '../oci/registries';
import { LayerFormatError, readLayer } from '../oci/tar';
import { Refused } from './output';

export type Template = ModuleTemplate & KubeObject;

export interface SourceOptions {
  registries: Registries;
  /** Where templates with `descriptor: {}` find their component (KLM_OCI_REGISTRY_HOST, --registry). */
  registry?: OcmRegistry;
  /** How long a download may take. */
  timeoutMs?: number;
}

/** A link as it may be shown: without user and password. */
export function shownLink(link: string): string {
  try {
    const u = new URL(link);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(a link that is no URL)';
  }
}

/** The body of an http(s) link; a failure says what to do, never quotes what came back. */
export async function download(link: string, what: string, timeoutMs = 60_000): Promise<string> {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new Refused(`${what}: its link is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Refused(`${what}: its link ${shownLink(link)} is not http or https`);
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  } catch (err) {
    const cause =
      (err as Error).name === 'TimeoutError'
        ? `no answer within ${Math.round(timeoutMs / 1000)} s`
        : 'it could not be reached';
    throw new Refused(
      `${what}: ${shownLink(link)}: ${cause}; check the address and your network, then run the command again`,
    );
  }
  if (!res.ok) throw new Refused(`${what}: ${shownLink(link)} answered HTTP ${res.status}`);
  return await res.text();
}

/** The raw manifest (YAML) of a template, from its link or its OCM component. */
export async function rawManifestOf(kube: KubeClient, template: Template, o: SourceOptions): Promise<string> {
  const where = `ModuleTemplate ${template.metadata.namespace}/${template.metadata.name}`;
  const link = template.spec.resources?.find((r) => r.name === 'rawManifest')?.link;
  if (link) return await download(link, `the raw manifest of ${where}`, o.timeoutMs);
  try {
    const descriptor = template.spec.descriptor;
    const loc = await locateComponent(descriptor, where, () => configuredLocation(kube, template, where, o.registry));
    const res = await rawManifestOfComponent(o.registries.client(loc.registry), descriptor, loc, where);
    const blob = await o.registries.client(res.registry).pullBlob(res.repository, res.digest);
    return readLayer(blob, `the raw-manifest layer ${res.digest} of ${where}`).text;
  } catch (err) {
    if (err instanceof DescriptorError || err instanceof LayerFormatError || err instanceof OciError)
      throw new Refused(`fetching the raw manifest of ${where}: ${err.message}`);
    throw err;
  }
}

async function configuredLocation(kube: KubeClient, template: Template, where: string, registry?: OcmRegistry) {
  const module = template.spec.moduleName ?? '';
  const ns = template.metadata.namespace;
  const meta = await kube.get<ModuleReleaseMeta & KubeObject>(API_VERSION, 'ModuleReleaseMeta', module, ns);
  const component = meta?.spec.ocmComponentName;
  if (!component)
    throw new Refused(
      `${where} has an empty descriptor and no rawManifest link, and ` +
        `${meta ? `ModuleReleaseMeta ${ns}/${module} names no spec.ocmComponentName` : `there is no ModuleReleaseMeta ${ns}/${module}`}: ` +
        `klm cannot tell where the module's manifest is`,
    );
  if (!registry?.host)
    throw new Refused(
      `${where} has an empty descriptor: its component ${component} is in the registry the ` +
        `lifecycle manager is configured with; name it with --registry host[/path] (or ` +
        `KLM_OCI_REGISTRY_HOST)`,
    );
  return configuredComponentLocation(registry, component, template.spec.version ?? '', where);
}
