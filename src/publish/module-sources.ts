// The files behind a module config, read as `modulectl create` reads them: the config itself,
// and the manifest and default CR it names, local (relative to the config file's directory) or
// downloaded over https. Every problem of the config and its files is reported at once.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { parseModuleConfig, type FileRef, type ModuleConfig } from './module-config';
import type { SourceFile } from './module-config-component';

export class ModuleConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(
      `${file} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}; fix ` +
        `${problems.length === 1 ? 'it' : 'them'} and run ` +
        `again:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'ModuleConfigError';
  }
}

/** The body of an https link; `what` names it in messages. */
export type Download = (url: string, what: string) => Promise<string>;

export interface ModuleSources {
  config: ModuleConfig;
  /** What modulectl ignores in the config (unknown keys). */
  warnings: string[];
  manifest: SourceFile;
  /** The manifest's objects. */
  manifestObjects: unknown[];
  defaultCR?: SourceFile & { object: Record<string, unknown> };
}

/** The problem with a local file, if any: missing, no file, empty. */
function fileProblem(file: string): string | undefined {
  try {
    const s = statSync(file);
    if (!s.isFile()) return `${file} is not a file`;
    return s.size === 0 ? `${file} is empty` : undefined;
  } catch {
    return `there is no file ${file} (the path is relative to the config file's directory)`;
  }
}

async function load(
  ref: FileRef,
  dir: string,
  what: string,
  download: Download,
): Promise<SourceFile & { where: string }> {
  if ('path' in ref) {
    const file = path.join(dir, ref.path);
    return { fileName: path.basename(file), text: await readFile(file, 'utf8'), where: file, localFile: file };
  }
  return {
    fileName: path.posix.basename(new URL(ref.url).pathname),
    text: await download(ref.url, what),
    where: ref.url,
  };
}

/** The objects of a YAML stream, or what is wrong with it. */
function yamlObjects(text: string): { objects: unknown[]; problem?: string } {
  const docs = parseAllDocuments(text);
  const bad = (Array.isArray(docs) ? docs : [docs]).find((d) => d.errors.length);
  if (bad) return { objects: [], problem: `not valid YAML: ${bad.errors[0]!.message.split('\n')[0]}` };
  return {
    objects: (Array.isArray(docs) ? docs : [docs])
      .map((d) => d.toJS() as unknown)
      .filter((o) => o !== null && o !== undefined),
  };
}

/** Reads the config at `configFile` and the files it names; throws ModuleConfigError with every problem. */
export async function readModuleSources(configFile: string, download: Download): Promise<ModuleSources> {
  let text: string;
  try {
    text = await readFile(configFile, 'utf8');
  } catch (err) {
    throw new Error(
      `cannot read the module config ${configFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give its path with --config-file`,
      { cause: err },
    );
  }
  const dir = path.dirname(configFile);
  const parsed = parseModuleConfig(text, (rel) => fileProblem(path.join(dir, rel)));
  if (!parsed.config) throw new ModuleConfigError(configFile, parsed.problems);
  const config = parsed.config;

  const problems: string[] = [];
  const { where, ...manifest } = await load(config.manifest, dir, 'manifest', download);
  const { objects: manifestObjects, problem } = yamlObjects(manifest.text);
  if (problem) problems.push(`manifest: ${where}: ${problem}`);
  else if (!manifestObjects.length) problems.push(`manifest: ${where} holds no objects; give the module's manifest`);
  let defaultCR: ModuleSources['defaultCR'];
  if (config.defaultCR) {
    const { where: crWhere, ...file } = await load(config.defaultCR, dir, 'defaultCR', download);
    const { objects, problem: crProblem } = yamlObjects(file.text);
    const object = objects[0];
    if (crProblem) problems.push(`defaultCR: ${crWhere}: ${crProblem}`);
    else if (objects.length !== 1 || typeof object !== 'object' || Array.isArray(object))
      problems.push(`defaultCR: ${crWhere} must hold one object (apiVersion, kind, metadata, spec)`);
    else defaultCR = { ...file, object: object as Record<string, unknown> };
  }
  if (problems.length) throw new ModuleConfigError(configFile, problems);
  return { config, warnings: parsed.warnings, manifest, manifestObjects, ...(defaultCR ? { defaultCR } : {}) };
}
