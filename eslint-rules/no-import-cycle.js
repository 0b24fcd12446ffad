// An ESLint rule without a plugin: no import circle among our TypeScript modules. An import (type
// imports too, and `export … from`) of a relative module fails when that module leads back, by
// its own relative imports, to the importing file; the message names the circle. Files other
// than the one linted are read from disk (their imports by TypeScript's pre-processor), cached
// and read again when they change. Packages are not followed.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** file → its relative imports, resolved, with the modification time they were read at. */
const imports = new Map();

function modified(file) {
  try {
    const stat = statSync(file);
    return stat.isFile() ? stat.mtimeMs : undefined;
  } catch {
    return undefined;
  }
}

/** The .ts file a relative specifier names (`./x`, `./x.js`, `./dir` with index.ts), else undefined. */
function resolve(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  return [base, `${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')].find(
    (f) => f.endsWith('.ts') && modified(f) !== undefined,
  );
}

function importsOf(file) {
  const mtime = modified(file);
  const known = imports.get(file);
  if (known && known.mtime === mtime) return known.files;
  const files =
    mtime === undefined
      ? []
      : ts
          .preProcessFile(readFileSync(file, 'utf8'), true, true)
          .importedFiles.map((f) => resolve(file, f.fileName))
          .filter(Boolean);
  imports.set(file, { mtime, files });
  return files;
}

/** The chain of imports from `from` to `to` (both included), if there is one; `seen`: the files this search has been through. */
function chain(from, to, seen) {
  if (from === to) return [to];
  if (seen.has(from)) return undefined;
  seen.add(from);
  for (const next of importsOf(from)) {
    const rest = chain(next, to, seen);
    if (rest) return [from, ...rest];
  }
  return undefined;
}

export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import circles between our modules' },
    messages: { cycle: 'Import circle: {{circle}}. Move what both sides need into the file that should own it.' },
    schema: [],
  },
  create(context) {
    const self = path.resolve(context.filename);
    const check = (node, source) => {
      if (typeof source?.value !== 'string') return;
      const target = resolve(self, source.value);
      const circle = target && chain(target, self, new Set());
      if (circle)
        context.report({
          node,
          messageId: 'cycle',
          data: { circle: [self, ...circle].map((f) => path.relative(context.cwd, f)).join(' → ') },
        });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source),
    };
  },
};
