// What keeps the workflows' patches honest (src/workflows/patches.ts): every patch id the code
// uses has a record, every record is used, and none outlives the release its record says removes it.
import semver from 'semver';
import type { PatchRecord } from '../../src/workflows/patches';

const CALL = /\b(patched|deprecatePatch)\(\s*(?:(['"`])([^'"`]*)\2)?/g;
/** Comments (a line's tail after `//`, blocks): calls named there are no calls. */
const COMMENT = /\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm;

export interface PatchCheck {
  /** Workflow source files: path → text. */
  code: Record<string, string>;
  records: Readonly<Record<string, PatchRecord>>;
  /** The package's version. */
  version: string;
}

/** What is wrong, a line each; empty when all is well. */
export function patchProblems({ code, records, version }: PatchCheck): string[] {
  const problems: string[] = [];
  const used = new Set<string>();
  for (const [file, text] of Object.entries(code))
    for (const m of text.replace(COMMENT, '$1').matchAll(CALL)) {
      const id = m[3];
      if (!id) problems.push(`${file}: ${m[1]} without a literal patch id: the check cannot follow it`);
      else if (!(id in records)) problems.push(`${file}: patch "${id}" has no record in src/workflows/patches.ts`);
      else used.add(id);
    }
  for (const [id, r] of Object.entries(records)) {
    if (!used.has(id)) problems.push(`patch "${id}" has a record but no code uses it: drop the record`);
    if (!semver.valid(r.removeIn)) problems.push(`patch "${id}": removeIn "${r.removeIn}" is no version`);
    else if (semver.gte(version, r.removeIn))
      problems.push(
        `patch "${id}" outlived its release: its record says ${r.removeIn} removes it, and the package is ${version}; ` +
          'remove the patched() branch (keep the patched code) and the record',
      );
  }
  return problems;
}
