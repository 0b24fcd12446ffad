// modulectl's module config (module-config.yaml), read as modulectl 3.2.0 reads it: the keys of
// internal/service/contentprovider/moduleconfig.go, the rules of
// internal/service/moduleconfig/reader and internal/common/validation. Where modulectl stops at
// the first problem, this reports every problem at once, each naming its key and what to do.
import { parse } from 'yaml';

/** OCM's component name pattern (component-descriptor-v2-schema), as modulectl checks it. */
const NAME_PATTERN = /^[a-z][-a-z0-9]*([.][a-z][-a-z0-9]*)*[.][a-z]{2,}(\/[a-z][-a-z0-9_]*([.][a-z][-a-z0-9_]*)*)+$/;
const NAME_MAX = 255;
/**
 * The ModuleTemplate CRD's rule for spec.moduleName (upstream's kubebuilder markers): modulectl
 * does not check it, and the control plane then refuses the template it wrote.
 */
const MODULE_NAME_PATTERN = /^[a-z]{3,}(-[a-z]{3,})*$/;
const MODULE_NAME_MAX = 64;
/** semver.org's pattern: what Masterminds' StrictNewVersion accepts (no leading v, three numbers). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const NAMESPACE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const NAMESPACE_MAX = 253;

const KEYS = [
  'name',
  'version',
  'manifest',
  'repository',
  'documentation',
  'icons',
  'team',
  'defaultCR',
  'security',
  'securityScanEnabled',
  'labels',
  'annotations',
  'manager',
  'associatedResources',
  'resources',
  'requiresDowntime',
  'internal',
  'beta',
];

export interface NameLink {
  name: string;
  link: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface ModuleManager extends GroupVersionKind {
  name: string;
  namespace?: string;
}

/** A file the config names: an https URL, or a path relative to the config file's directory. */
export type FileRef = { url: string } | { path: string };

export interface ModuleConfig {
  /** The component name, e.g. kyma-project.io/module/template-operator. */
  name: string;
  version: string;
  manifest: FileRef;
  repository: string;
  documentation: string;
  icons: NameLink[];
  team?: string;
  defaultCR?: FileRef;
  securityScanEnabled: boolean;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  manager?: ModuleManager;
  associatedResources: GroupVersionKind[];
  resources: NameLink[];
  requiresDowntime: boolean;
  internal: boolean;
  beta: boolean;
}

export interface ParsedModuleConfig {
  /** Set when there are no problems. */
  config?: ModuleConfig;
  problems: string[];
  /** What modulectl ignores (unknown keys). */
  warnings: string[];
}

/** What is wrong with a local file the config names (its path relative to the config's directory), if anything. */
export type FileCheck = (path: string) => string | undefined;

/** The module's name as the control plane knows it: the last segment of the component name. */
export function shortName(component: string): string {
  return component.slice(component.lastIndexOf('/') + 1);
}

type Problems = string[];

/**
 * The failsafe schema reads every scalar as a string, as modulectl's Go structs take them
 * (`version: 1.0` is "1.0", not the number 1); '' and '~' are what an empty value reads as.
 */
function present(v: unknown): boolean {
  return v !== undefined && v !== '' && v !== '~' && v !== 'null';
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(raw: Record<string, unknown>, key: string, problems: Problems, missing?: string): string | undefined {
  const v = raw[key];
  if (!present(v)) {
    if (missing) problems.push(`${key}: missing; ${missing}`);
    return undefined;
  }
  if (typeof v !== 'string') {
    problems.push(`${key}: must be a single value, not a ${Array.isArray(v) ? 'list' : 'map'}`);
    return undefined;
  }
  return v;
}

function bool(raw: Record<string, unknown>, key: string, fallback: boolean, problems: Problems): boolean {
  const v = raw[key];
  if (!present(v)) return fallback;
  if (v === 'true' || v === 'false') return v === 'true';
  problems.push(`${key}: must be true or false, not ${JSON.stringify(v)}`);
  return fallback;
}

function httpsProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not a URL`;
  }
  return url.protocol === 'https:' ? undefined : `"${value}" does not use https`;
}

function httpsUrl(raw: Record<string, unknown>, key: string, example: string, problems: Problems): string {
  const v = str(raw, key, problems, `give an https URL, e.g. ${example}`);
  const bad = v === undefined ? undefined : httpsProblem(v);
  if (bad) problems.push(`${key}: ${bad}; give an https URL, e.g. ${example}`);
  return v ?? '';
}

/** A URL as modulectl tells one from a file path: a scheme (`xyz:`), then a host. */
function fileRef(
  raw: Record<string, unknown>,
  key: string,
  what: string,
  required: boolean,
  checkFile: FileCheck,
  problems: Problems,
): FileRef | undefined {
  const hint = `give the https URL of ${what}, or its file path relative to the config file`;
  const v = str(raw, key, problems, required ? hint : undefined);
  if (v === undefined) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(v)) {
    const bad = httpsProblem(v) ?? (new URL(v).host ? undefined : `"${v}" names no host`);
    if (bad) problems.push(`${key}: ${bad}; ${hint}`);
    return { url: v };
  }
  if (v.startsWith('/')) {
    problems.push(`${key}: "${v}" is an absolute path; give it relative to the config file's directory`);
    return { path: v };
  }
  const bad = checkFile(v);
  if (bad) problems.push(`${key}: ${bad}`);
  return { path: v };
}

/** A list of {name, link}, or a map name → link (modulectl takes both); names unique, links https. */
function nameLinks(raw: Record<string, unknown>, key: string, what: string, problems: Problems): NameLink[] {
  const v = raw[key];
  if (!present(v)) return [];
  let entries: { at: string; name: unknown; link: unknown }[];
  if (Array.isArray(v)) {
    entries = v.map((e, i) =>
      isMap(e)
        ? { at: `${key}[${i}]`, name: e.name, link: e.link }
        : { at: `${key}[${i}]`, name: undefined, link: undefined },
    );
  } else if (isMap(v)) {
    entries = Object.entries(v).map(([name, link]) => ({ at: `${key}.${name}`, name, link }));
  } else {
    problems.push(`${key}: must be a list of {name, link} (${what}), or a map of name to link`);
    return [];
  }
  const out: NameLink[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    if (typeof e.name !== 'string' || !present(e.name)) {
      problems.push(`${e.at}: needs a name`);
      continue;
    }
    if (seen.has(e.name))
      problems.push(`${e.at}: the name "${e.name}" appears twice; give each entry of ${key} a name of its own`);
    seen.add(e.name);
    const bad = typeof e.link !== 'string' || !present(e.link) ? 'needs a link' : httpsProblem(e.link);
    if (bad) problems.push(`${e.at}: ${bad}; give an https link`);
    out.push({ name: e.name, link: typeof e.link === 'string' ? e.link : '' });
  }
  return out;
}

function stringMap(raw: Record<string, unknown>, key: string, problems: Problems): Record<string, string> {
  const v = raw[key];
  if (!present(v)) return {};
  if (!isMap(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    problems.push(`${key}: must be a map of names to single values`);
    return {};
  }
  return v as Record<string, string>;
}

function gvk(raw: Record<string, unknown>, at: string, problems: Problems): GroupVersionKind {
  const field = (k: keyof GroupVersionKind) => {
    const v = raw[k];
    if (typeof v === 'string' && present(v)) return v;
    problems.push(
      `${at}.${k}: missing; give the ${k === 'group' ? 'API group' : k === 'version' ? 'API version' : 'kind'}`,
    );
    return '';
  };
  return { group: field('group'), version: field('version'), kind: field('kind') };
}

function manager(raw: Record<string, unknown>, problems: Problems): ModuleManager | undefined {
  const v = raw.manager;
  if (!present(v)) return undefined;
  if (!isMap(v)) {
    problems.push(
      'manager: must be a map: name, namespace (optional), group, version, kind of the workload that tells the module is ready',
    );
    return undefined;
  }
  const name = typeof v.name === 'string' && present(v.name) ? v.name : undefined;
  if (!name)
    problems.push('manager.name: missing; name the workload (a Deployment, say) that tells the module is ready');
  const { group, version, kind } = gvk(v, 'manager', problems);
  const namespace = typeof v.namespace === 'string' && present(v.namespace) ? v.namespace : undefined;
  if (namespace !== undefined && (!NAMESPACE.test(namespace) || namespace.length > NAMESPACE_MAX)) {
    problems.push(
      `manager.namespace: "${namespace}" is not a namespace name; use at most ${NAMESPACE_MAX} lower-case letters, digits and '-'`,
    );
  }
  return { name: name ?? '', ...(namespace ? { namespace } : {}), group, version, kind };
}

function associatedResources(raw: Record<string, unknown>, problems: Problems): GroupVersionKind[] {
  const v = raw.associatedResources;
  if (!present(v)) return [];
  if (!Array.isArray(v)) {
    problems.push('associatedResources: must be a list of {group, version, kind}');
    return [];
  }
  return v.map((e, i) => gvk(isMap(e) ? e : {}, `associatedResources[${i}]`, problems));
}

/** The component name (`name`), checked: its form, its length, and the module name its last segment gives. */
function componentName(raw: Record<string, unknown>, problems: Problems): string {
  const name =
    str(raw, 'name', problems, "give the module's component name, e.g. kyma-project.io/module/template-operator") ?? '';
  if (name && name.length > NAME_MAX)
    problems.push(`name: ${name.length} characters long; shorten it to at most ${NAME_MAX}`);
  else if (name && !NAME_PATTERN.test(name))
    problems.push(
      `name: "${name}" is not a component name; use a lower-case domain and path, e.g. kyma-project.io/module/template-operator`,
    );
  else if (name && (!MODULE_NAME_PATTERN.test(shortName(name)) || shortName(name).length > MODULE_NAME_MAX)) {
    problems.push(
      `name: its last segment "${shortName(name)}" names the module in the ModuleTemplate, which ` +
        `takes words of three or more lower-case letters joined by '-', at most ${MODULE_NAME_MAX} ` +
        `characters, e.g. template-operator`,
    );
  }
  return name;
}

/** The module's semantic version (`version`), checked. */
function moduleVersion(raw: Record<string, unknown>, problems: Problems): string {
  const version = str(raw, 'version', problems, "give the module's semantic version, e.g. 1.0.0") ?? '';
  if (version && !SEMVER.test(version))
    problems.push(
      `version: "${version}" is not a semantic version; write MAJOR.MINOR.PATCH without a leading v, e.g. 1.0.0`,
    );
  return version;
}

/** The icons the UI shows (`icons`): at least one. */
function iconsOf(raw: Record<string, unknown>, problems: Problems) {
  const icons = nameLinks(raw, 'icons', 'the icons the UI shows', problems);
  if (!present(raw.icons))
    problems.push('icons: missing; give at least one icon, e.g. [{name: module-icon, link: https://…}]');
  else if (Object.keys(raw.icons as object).length === 0) problems.push('icons: empty; give at least one icon');
  return icons;
}

/** Reads module-config.yaml; `checkFile` says what is wrong with a local file it names. */
export function parseModuleConfig(text: string, checkFile: FileCheck): ParsedModuleConfig {
  let raw: unknown;
  try {
    raw = parse(text, { schema: 'failsafe' });
  } catch (err) {
    return { problems: [`not valid YAML: ${(err as Error).message.split('\n')[0]}`], warnings: [] };
  }
  if (!isMap(raw))
    return {
      problems: [
        "must be a YAML map of modulectl's keys (name, version, manifest, repository, documentation, icons, …)",
      ],
      warnings: [],
    };
  const problems: Problems = [];
  const name = componentName(raw, problems);
  const version = moduleVersion(raw, problems);
  const manifest = fileRef(raw, 'manifest', "the module's manifest", true, checkFile, problems);
  const repository = httpsUrl(raw, 'repository', 'https://github.com/kyma-project/template-operator', problems);
  const documentation = httpsUrl(
    raw,
    'documentation',
    'https://help.sap.com/docs/btp/sap-business-technology-platform/kyma-modules',
    problems,
  );
  const icons = iconsOf(raw, problems);
  const securityScanEnabled = bool(raw, 'securityScanEnabled', true, problems);
  const team = str(
    raw,
    'team',
    problems,
    securityScanEnabled ? "give the module's team (e.g. kyma/jellyfish), or set securityScanEnabled: false" : undefined,
  );
  const defaultCR = fileRef(raw, 'defaultCR', "the module's default CR", false, checkFile, problems);
  const labels = stringMap(raw, 'labels', problems);
  const annotations = stringMap(raw, 'annotations', problems);
  const theManager = manager(raw, problems);
  const associated = associatedResources(raw, problems);
  const resources = nameLinks(raw, 'resources', 'further resources of the module', problems);
  const requiresDowntime = bool(raw, 'requiresDowntime', false, problems);
  const internal = bool(raw, 'internal', false, problems);
  const beta = bool(raw, 'beta', false, problems);
  const warnings = Object.keys(raw)
    .filter((k) => !KEYS.includes(k))
    .map((k) => `unknown key "${k}" ignored (modulectl ignores it too)`);
  if (problems.length) return { problems, warnings };
  const config: ModuleConfig = {
    name,
    version,
    manifest: manifest!,
    repository,
    documentation,
    icons,
    ...(team ? { team } : {}),
    ...(defaultCR ? { defaultCR } : {}),
    securityScanEnabled,
    labels,
    annotations,
    ...(theManager ? { manager: theManager } : {}),
    associatedResources: associated,
    resources,
    requiresDowntime,
    internal,
    beta,
  };
  return { config, problems, warnings };
}
