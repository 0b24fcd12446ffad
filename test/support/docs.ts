// Checks of the documentation (test/unit/docs.test.ts): relative links that resolve, anchors that
// name a heading, and a configuration reference that names exactly the variables the code reads.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** A link that does not resolve: where it is, what it says, and why it fails. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  problem: string;
}

/** Lines of markdown outside fenced code blocks, with their numbers (1-based). */
function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const opens = /^\s{0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence !== undefined) {
      if (opens && opens[0] === fence[0] && opens.length >= fence.length) fence = undefined;
      return;
    }
    if (opens) {
      fence = opens;
      return;
    }
    out.push({ text, line: i + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (`_` and `-` kept), each space a `-`. */
export function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file: its headings' slugs (repeats numbered as GitHub does) and explicit `<a id|name>`. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** The link targets of a markdown file (inline links, images, reference definitions), outside code. */
export function linksOf(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/.exec(text)?.[1];
    if (definition !== undefined) {
      links.push({ target: definition, line });
      continue;
    }
    const prose = text.replace(/(`+)[\s\S]*?\1/g, '');
    for (const m of prose.matchAll(/\]\(\s*(?:<([^>]*)>|([^\s)]+))(?:\s+"[^"]*")?\s*\)/g))
      links.push({ target: (m[1] ?? m[2])!, line });
  }
  return links;
}

/** Whether a target leaves the repository (a scheme such as https: or mailto:, or `//host`). */
function external(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/**
 * The relative links of `files` (paths from `root`) that do not resolve: a file or directory that
 * does not exist, or an `#anchor` into a markdown file that names none of its headings.
 */
export function brokenLinks(root: string, files: readonly string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    let a = anchors.get(file);
    if (!a) anchors.set(file, (a = anchorsOf(readFileSync(path.join(root, file), 'utf8'))));
    return a;
  };
  for (const file of files) {
    for (const { target, line } of linksOf(readFileSync(path.join(root, file), 'utf8'))) {
      if (external(target)) continue;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const to =
        pathPart === ''
          ? file
          : path.normalize(path.join(pathPart.startsWith('/') ? '' : path.dirname(file), pathPart));
      if (to.startsWith('..') || !existsSync(path.join(root, to))) {
        broken.push({ file, line, target, problem: `${to} does not exist` });
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(path.join(root, to)).isDirectory() || !to.endsWith('.md')) continue;
      if (!anchorsIn(to).has(anchor)) broken.push({ file, line, target, problem: `${to} has no heading #${anchor}` });
    }
  }
  return broken;
}

/** The markdown files under `dir` (a path from `root`), recursively, as paths from `root`. */
export function markdownFiles(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join(dir, f))
    .sort();
}

/**
 * The variables a configuration reference names: the backticked names in the first column of
 * every table whose first column is headed `variable`.
 */
export function referenceVariables(markdown: string): Set<string> {
  const names = new Set<string>();
  let inTable = false;
  for (const { text } of proseLines(markdown)) {
    const first = /^\|([^|]*)\|/.exec(text)?.[1]?.trim();
    if (first === undefined) {
      inTable = false;
      continue;
    }
    if (first === 'variable') inTable = true;
    else if (inTable) for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]!);
  }
  return names;
}

/** Names the KLM_ pattern finds in the code that are no variable: what each is instead. */
export const KLM_NAMES_THAT_ARE_NOT_VARIABLES: Record<string, string> = {
  KLM_TIMEOUT: "an error code (src/k8s/transport.ts: a request's deadline)",
  KLM_WITH_NODE: 'a mark scripts/with-node.mjs sets for its children (the Node.js it chose), no setting',
};

/** Variables the code reads that are the system's, not settings: why each is read. */
export const SYSTEM_VARIABLES: Record<string, string> = {
  HOME: "the user's home, for default paths (~/.kube/config)",
  PATH: 'scripts/with-node.mjs puts another Node.js first on it',
  GOFLAGS: 'removed from the environment of the Go builds (src/localstack/tools.ts), never read',
};

/** Variables the Temporal SDK's environment configuration reads that these processes do not use. */
export const UNUSED_SDK_VARIABLES: Record<string, string> = {
  TEMPORAL_CODEC_ENDPOINT: 'a codec server, for the Temporal CLI and UI; no connection option',
  TEMPORAL_CODEC_AUTH: 'the same',
};

/** The files the product's code is in: src/ (TypeScript), and scripts/ and bin/ (the scripts npm runs). */
export function codeFiles(root: string): string[] {
  const under = (dir: string, ext: RegExp) =>
    readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => ext.test(f))
      .map((f) => path.join(dir, f));
  return [...under('src', /\.ts$/), ...under('scripts', /\.m?js$/), ...under('bin', /\.m?js$/)].sort();
}

/**
 * The environment variables the code reads, found three ways:
 * - every `KLM_…` name in the code (a read through `env.KLM_X`, a commander option's `.env('KLM_X')`, a
 *   build argument named in a message), except the names of KLM_NAMES_THAT_ARE_NOT_VARIABLES;
 * - every other name read as `env.NAME`, `process.env.NAME` or `env['NAME']`, except SYSTEM_VARIABLES;
 * - the `TEMPORAL_…` names that the SDK's environment configuration reads (`envProvider['…']` in
 *   @temporalio/envconfig, which src/infra/temporal-env.ts hands the environment to), except
 *   UNUSED_SDK_VARIABLES.
 */
export function codeVariables(root: string, files: readonly string[], sdkEnvconfig: string): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    const code = readFileSync(path.join(root, file), 'utf8');
    for (const m of code.matchAll(/\bKLM_[A-Z0-9_]*[A-Z0-9]\b/g))
      if (!(m[0] in KLM_NAMES_THAT_ARE_NOT_VARIABLES)) names.add(m[0]);
    for (const m of code.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g)) {
      const name = (m[1] ?? m[2])!;
      if (!(name in SYSTEM_VARIABLES) && !(name in KLM_NAMES_THAT_ARE_NOT_VARIABLES)) names.add(name);
    }
  }
  for (const m of sdkEnvconfig.matchAll(/envProvider\['(TEMPORAL_[A-Z0-9_]+)'\]/g))
    if (!(m[1]! in UNUSED_SDK_VARIABLES)) names.add(m[1]!);
  return names;
}
