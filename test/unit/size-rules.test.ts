// The size rules of eslint.config.js are errors for src/ and leave tests alone: a file over 400
// lines of code, a function over 80, a function of complexity over 20 fails `npm run lint`.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function sizeErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.severity === 2 && ['max-lines', 'max-lines-per-function', 'complexity'].includes(m.ruleId ?? ''))
    .map((m) => m.ruleId!);
}

const statements = (n: number) => Array.from({ length: n }, (_, i) => `  total += ${i};`).join('\n');
/** A function of `n` + 4 lines. */
const longFunction = (n: number) =>
  `export function f(): number {\n  let total = 0;\n${statements(n)}\n  return total;\n}\n`;
const branches = (n: number) =>
  `export function g(x: number): number {\n${Array.from({ length: n }, (_, i) => `  if (x === ${i}) return ${i};`).join('\n')}\n  return -1;\n}\n`;
const manyFunctions = (n: number) =>
  Array.from({ length: n }, (_, i) => `export function f${i}(): number {\n  return ${i};\n}\n`).join('\n');

describe('size rules', () => {
  it('fail a function of more than 80 lines in src/, and pass one of 80', async () => {
    expect(await sizeErrors('src/decisions/names.ts', longFunction(77))).toEqual(['max-lines-per-function']);
    expect(await sizeErrors('src/decisions/names.ts', longFunction(76))).toEqual([]);
  });

  it('fail a function of complexity over 20 in src/', async () => {
    expect(await sizeErrors('src/decisions/names.ts', branches(20))).toEqual(['complexity']);
    expect(await sizeErrors('src/decisions/names.ts', branches(19))).toEqual([]);
  });

  it('fail a file of more than 400 lines of code in src/', async () => {
    expect(await sizeErrors('src/decisions/names.ts', manyFunctions(140))).toEqual(['max-lines']);
  });

  it('leave tests alone', async () => {
    expect(await sizeErrors('test/unit/size-rules.test.ts', longFunction(120) + branches(30))).toEqual([]);
  });
});
