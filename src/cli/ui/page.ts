// The web view's page, from src/cli/ui/app/: index.html, style.css, and the TypeScript of its
// script, which esbuild bundles from main.ts into one file, app.js (no framework, no CDN). From
// sources (tsx, the tests) the script is bundled in memory when the server starts; `npm run build`
// writes the three files to dist/cli/app/, where the built klm (this file inlined into
// dist/cli/klm.js) finds them at the same `./app/`.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Page {
  html: string;
  css: string;
  js: string;
}

const DIR = fileURLToPath(new URL('./app/', import.meta.url));
const FILES = { html: 'index.html', css: 'style.css', js: 'app.js' } as const;

/** The script bundled from its sources (esbuild is a development dependency: the built klm never needs it). */
async function bundle(): Promise<string> {
  const { build } = await import('esbuild');
  const { outputFiles } = await build({
    entryPoints: [path.join(DIR, 'main.ts')],
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    logLevel: 'warning',
  });
  return outputFiles[0]!.text;
}

/** The page: as built, else from its sources. */
export async function loadPage(): Promise<Page> {
  const built = path.join(DIR, FILES.js);
  const [html, css, js] = await Promise.all([
    readFile(path.join(DIR, FILES.html), 'utf8'),
    readFile(path.join(DIR, FILES.css), 'utf8'),
    existsSync(built) ? readFile(built, 'utf8') : bundle(),
  ]);
  return { html, css, js };
}

/** Writes the page into `dir` (the build: dist/cli/app/). */
export async function writePage(dir: string): Promise<void> {
  const page = await loadPage();
  await mkdir(dir, { recursive: true });
  await Promise.all((Object.keys(FILES) as (keyof Page)[]).map((k) => writeFile(path.join(dir, FILES[k]), page[k])));
}
