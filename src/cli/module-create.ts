// klm module create: modulectl's `create` for module authors. Reads a module-config.yaml, pushes
// the module's OCM component to a registry, and writes the ModuleTemplate modulectl 3.2.0
// writes (`descriptor: {}`: the lifecycle manager finds the component through the
// ModuleReleaseMeta's ocmComponentName in the registry it is configured with).
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { Credentials } from '../oci/auth';
import { Registries } from '../oci/registries';
import { OciError } from '../oci/registry-client';
import { defaultCrIsClusterScoped } from '../publish/cluster-scope';
import {
  componentRepository,
  componentVersionExists,
  pushComponent,
  type ComponentVersion,
  type PushTarget,
} from '../publish/component';
import { shortName } from '../publish/module-config';
import { moduleComponentOf } from '../publish/module-config-component';
import { moduleTemplateOf } from '../publish/module-config-template';
import { ModuleConfigError, readModuleSources } from '../publish/module-sources';
import { dockerConfigCredentials } from './docker-credentials';
import { download } from './module-source';
import { Refused, UsageError } from './output';

export interface CreateOptions {
  configFile: string;
  output: string;
  namespace: string;
  registry?: string;
  dryRun?: boolean;
  insecure?: boolean;
  /** `user:password`, from --registry-credentials or KLM_REGISTRY_CREDENTIALS. */
  registryCredentials?: string;
  overwrite?: boolean;
  /** A PEM bundle of CAs the registry's certificate may chain to (--registry-ca-file, KLM_REGISTRY_CA_FILE as the worker's). */
  registryCaFile?: string;
}

/** `host[:port][/subpath]`: the registry host and the repository path components go under. */
export function pushTargetOf(registry: string): PushTarget {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(registry))
    throw new UsageError(
      `--registry ${registry}: give host[:port][/subpath] without a scheme (HTTPS is used; --insecure allows plain HTTP)`,
    );
  const [host, ...path] = registry.replace(/\/+$/, '').split('/');
  if (!host)
    throw new UsageError('--registry: give host[:port][/subpath], e.g. europe-docker.pkg.dev/my-project/modules');
  const subPath = path.join('/');
  return { host: host.toLowerCase(), ...(subPath ? { subPath } : {}) };
}

/** `user:password` (the password may hold ':'); a message never quotes the value. */
export function credentialsOf(value: string): Credentials {
  const colon = value.indexOf(':');
  if (colon <= 0 || colon === value.length - 1)
    throw new UsageError('--registry-credentials (or KLM_REGISTRY_CREDENTIALS): give user:password');
  return { username: value.slice(0, colon), password: value.slice(colon + 1) };
}

function registriesFor(target: PushTarget, creds: Credentials | undefined, o: CreateOptions): Registries {
  // The credentials given go to the target registry only; without them, those `docker login` keeps.
  const credentials = creds
    ? {
        describe: '--registry-credentials',
        credentialsFor: (host: string) => Promise.resolve(host === target.host ? creds : undefined),
      }
    : dockerConfigCredentials();
  return new Registries({
    ...(o.registryCaFile ? { caFile: o.registryCaFile } : {}),
    insecureHosts: o.insecure ? [target.host] : [],
    ...(credentials ? { credentials } : {}),
  });
}

/** Pushes the component, refused over an existing version unless --overwrite. */
async function push(
  target: PushTarget,
  c: ComponentVersion,
  o: CreateOptions,
  progress: (line: string) => void,
): Promise<void> {
  // An empty KLM_REGISTRY_CREDENTIALS is no credentials.
  const creds = o.registryCredentials ? credentialsOf(o.registryCredentials) : undefined;
  const registries = registriesFor(target, creds, o);
  const client = registries.client(target.host);
  const where = `${target.host}/${componentRepository(target, c.name)}`;
  const component = `${c.name}:${c.version}`;
  try {
    if (await componentVersionExists(target, c.name, c.version, client)) {
      if (!o.overwrite)
        throw new Refused(
          `component ${component} is in ${where} already: raise the version in ${o.configFile}, or give --overwrite to replace it (Kymas that run ${c.version} then install the new content)`,
        );
      progress(`component ${component} is in ${where} already: replacing it (--overwrite)`);
    }
    progress(`pushing component ${component} to ${where}`);
    await pushComponent(target, c, client);
  } catch (err) {
    // The registry's own message would name the worker's setting (KLM_OCI_REGISTRY_CRED_SECRET).
    if (err instanceof OciError && err.reason === 'RegistryCredentialsRefused' && !registries.credentials)
      throw new Refused(
        `registry ${target.host} refused anonymous access to ${where}: give --registry-credentials user:password (or set KLM_REGISTRY_CREDENTIALS)`,
      );
    throw err;
  }
}

/** Validates, pushes (unless --dry-run) and writes the template; returns what to do next. */
export async function createModule(o: CreateOptions, progress: (line: string) => void): Promise<string> {
  if (!o.registry && !o.dryRun)
    throw new UsageError('--registry is required (the OCI registry the component goes to), unless --dry-run');
  const target = o.registry ? pushTargetOf(o.registry) : undefined;
  const sources = await readModuleSources(o.configFile, download).catch((err: unknown) => {
    throw err instanceof ModuleConfigError ? new Refused(err.message) : err;
  });
  for (const w of sources.warnings) progress(`${o.configFile}: ${w}`);
  const { config } = sources;
  const clusterScoped = defaultCrIsClusterScoped(sources.manifestObjects, sources.defaultCR?.object);
  const template = moduleTemplateOf(config, {
    ...(sources.defaultCR ? { defaultCR: sources.defaultCR.object } : {}),
    clusterScoped,
    namespace: o.namespace,
  });

  if (target && !o.dryRun)
    await push(
      target,
      moduleComponentOf(
        config,
        { manifest: sources.manifest, ...(sources.defaultCR ? { defaultCR: sources.defaultCR } : {}) },
        clusterScoped,
      ),
      o,
      progress,
    );
  await writeFile(o.output, stringify(template));

  const module = shortName(config.name);
  const registrySetting = target
    ? `KLM_OCI_REGISTRY_HOST=${target.host}${target.subPath ? ` with KLM_MODULES_REPOSITORY_SUBPATH=${target.subPath}` : ''}`
    : 'KLM_OCI_REGISTRY_HOST must name the registry you push it to';
  const pushed = o.dryRun ? ' (--dry-run: nothing pushed)' : '';
  return `ModuleTemplate ${module}-${config.version} written to ${o.output}${pushed}; next: apply it to the control plane (kubectl apply -n <namespace> -f ${o.output}) with a ModuleReleaseMeta ${module} whose spec.ocmComponentName is ${config.name} and whose channels name ${config.version}; the template's descriptor is {}, so the lifecycle manager finds the component in the registry it is configured with: ${registrySetting}`;
}
