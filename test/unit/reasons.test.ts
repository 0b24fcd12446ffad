// The table of reasons in docs/operator/states-and-reasons.md is the one table of src/api/reasons.ts, row by row.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { REASONS, reasonOf, stateOf } from '../../src/api/reasons';

function expectedTable(): string {
  const rows = Object.entries(REASONS).map(([reason, { state, means }]) => `| ${state} | \`${reason}\` | ${means} |`);
  return ['| state | reason | means |', '| --- | --- | --- |', ...rows].join('\n');
}

describe('reasons', () => {
  it('are documented in docs/operator/states-and-reasons.md exactly as the table maps them (regenerate the block from the expected value below)', async () => {
    const doc = await readFile(new URL('../../docs/operator/states-and-reasons.md', import.meta.url), 'utf8');
    const block = /<!-- reasons:start -->\n([\s\S]*?)\n<!-- reasons:end -->/.exec(doc)?.[1];
    expect(block).toBe(expectedTable());
  });

  it('map every failure type to a reason: typed ones keep theirs, anything else is Failed (Error)', () => {
    expect(reasonOf('DigestMismatch')).toBe('DigestMismatch');
    expect(reasonOf('SomethingNew')).toBe('Failed');
    expect(reasonOf(undefined)).toBe('Failed');
    expect(stateOf(reasonOf('SomethingNew'))).toBe('Error');
  });
});
