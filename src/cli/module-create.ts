// klm module create: modulectl's `create` for module authors. Reads a module-config.yaml and
// writes the ModuleTemplate modulectl 3.2.0 writes (`descriptor: {}`: the lifecycle manager finds
// the component through the ModuleReleaseMeta's ocmComponentName in the registry it is configured
// with); with --output-constructor-file, also the component constructor modulectl 3.2.0 writes
// for the OCM CLI, which pushes it. With --registry, klm pushes the component itself: klm's own
// extra, as modulectl 3.1 (the last modulectl that pushed) did.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
import { componentConstructorOf } from '../publish/component-constructor';
import { managerVersionProblem } from '../publish/manager-version';
import { manifestImages } from '../publish/manifest-images';
import { shortName, type ModuleConfig } from '../publish/module-config';
import { entryName, moduleComponentOf, type SourceFile } from '../publish/module-config-component';
import { moduleTemplateOf } from '../publish/module-config-template';
import { ModuleConfigError, readModuleSources } from '../publish/module-sources';
import { dockerConfigCredentials } from './docker-credentials';
import { gitHeadCommit } from './git-head';
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
  /** Where to write the component constructor for the OCM CLI (modulectl 3.2.0's --output-constructor-file). */
  outputConstructorFile?: string;
  /** The git repository of the module's sources (the constructor's git source), default `.`. */
  moduleSourcesGitDirectory?: string;
  /** modulectl 3.2.0's: false checks that the manager's image is tagged with the version; default true. */
  skipVersionValidation?: boolean;
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
          `component ${component} is in ${where} already: raise the version in ${o.configFile}, or ` +
            `give --overwrite to replace it (Kymas that run ${c.version} then install the new content)`,
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

/**
 * A file the constructor names: the local file, or a downloaded one written to a temporary
 * directory of its own (as modulectl downloads to temporary files).
 */
export async function constructorFile(
  file: SourceFile,
  resource: string,
  progress: (line: string) => void,
): Promise<string> {
  if (file.localFile) return path.resolve(file.localFile);
  const written = path.join(await mkdtemp(path.join(tmpdir(), `klm-${resource}-`)), entryName(file, resource));
  await writeFile(written, file.text);
  progress(`${resource}: downloaded to ${written}, which the constructor names`);
  return written;
}

/** The images the manifest runs, each checked as modulectl checks them; every problem at once. */
function checkedImages(configFile: string, objects: unknown[]) {
  const { images, problems } = manifestImages(objects);
  if (problems.length)
    throw new Refused(
      new ModuleConfigError(
        configFile,
        problems.map((p) => `manifest: ${p}`),
      ).message,
    );
  return images;
}

async function writeConstructor(
  file: string,
  templateFile: string,
  sources: { config: ModuleConfig; manifest: SourceFile; defaultCR?: SourceFile },
  checked: { images: ReturnType<typeof checkedImages>; commit: string; clusterScoped: boolean },
  progress: (line: string) => void,
): Promise<void> {
  const manifestFile = await constructorFile(sources.manifest, 'raw-manifest', progress);
  const defaultCRFile = sources.defaultCR
    ? await constructorFile(sources.defaultCR, 'default-cr', progress)
    : undefined;
  const constructor = componentConstructorOf(sources.config, {
    manifestFile,
    ...(defaultCRFile ? { defaultCRFile } : {}),
    templateFile: path.resolve(templateFile),
    images: checked.images,
    source: { repoUrl: sources.config.repository, commit: checked.commit },
    clusterScoped: checked.clusterScoped,
  });
  await writeFile(file, stringify(constructor));
}

/** What `module create` did, and what to do next with what it wrote. */
function nextSteps(o: CreateOptions, config: ModuleConfig, target: PushTarget | undefined): string {
  const module = shortName(config.name);
  const registrySetting = target
    ? `KLM_OCI_REGISTRY_HOST=${target.host}${target.subPath ? ` with KLM_MODULES_REPOSITORY_SUBPATH=${target.subPath}` : ''}`
    : 'KLM_OCI_REGISTRY_HOST must name the registry you push it to';
  const pushed = o.dryRun ? ' (--dry-run: nothing pushed)' : target ? '' : ' (nothing pushed: no --registry)';
  const ocm = o.outputConstructorFile
    ? `; component constructor written to ` +
      o.outputConstructorFile +
      (target && !o.dryRun
        ? ''
        : `: push the component with the OCM CLI (ocm add componentversions --create --file ./ctf ` +
          `${o.outputConstructorFile}, then ocm transfer ctf ./ctf <registry>)`)
    : '';
  return (
    `ModuleTemplate ${module}-${config.version} written to ${o.output}${pushed}${ocm}; next: ` +
    `apply it to the control plane (kubectl apply -n <namespace> -f ${o.output}) with a ` +
    `ModuleReleaseMeta ${module} whose spec.ocmComponentName is ${config.name} and whose ` +
    `channels name ${config.version}; the template's descriptor is {}, so the lifecycle manager ` +
    `finds the component in the registry it is configured with: ${registrySetting}`
  );
}

/**
 * Validates, pushes (with --registry, unless --dry-run), writes the template and (with
 * --output-constructor-file) the component constructor; returns what to do next.
 */
export async function createModule(o: CreateOptions, progress: (line: string) => void): Promise<string> {
  if (!o.registry && !o.dryRun && !o.outputConstructorFile)
    throw new UsageError(
      '--registry is required (the OCI registry klm pushes the component to), unless --output-constructor-file (the OCM CLI pushes) or --dry-run',
    );
  const target = o.registry ? pushTargetOf(o.registry) : undefined;
  const sources = await readModuleSources(o.configFile, download).catch((err: unknown) => {
    throw err instanceof ModuleConfigError ? new Refused(err.message) : err;
  });
  for (const w of sources.warnings) progress(`${o.configFile}: ${w}`);
  const { config } = sources;
  const versionProblem =
    o.skipVersionValidation === false ? managerVersionProblem(config, sources.manifestObjects) : undefined;
  if (versionProblem) throw new Refused(new ModuleConfigError(o.configFile, [versionProblem]).message);
  const clusterScoped = defaultCrIsClusterScoped(sources.manifestObjects, sources.defaultCR?.object);
  const template = moduleTemplateOf(config, {
    ...(sources.defaultCR ? { defaultCR: sources.defaultCR.object } : {}),
    clusterScoped,
    namespace: o.namespace,
  });
  const forConstructor = o.outputConstructorFile
    ? {
        images: checkedImages(o.configFile, sources.manifestObjects),
        commit: await gitHeadCommit(o.moduleSourcesGitDirectory ?? '.'),
        clusterScoped,
      }
    : undefined;

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
  if (o.outputConstructorFile && forConstructor)
    await writeConstructor(o.outputConstructorFile, o.output, sources, forConstructor, progress);

  return nextSteps(o, config, target);
}
