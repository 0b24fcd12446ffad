// Patches of workflow code do not outlive the release their record says removes them
// (src/workflows/patches.ts, docs/contributor/workflow-versioning.md, "Patches retire").
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PATCHES } from '../../src/workflows/patches';
import { patchProblems } from '../support/patches';

const WORKFLOWS = fileURLToPath(new URL('../../src/workflows/', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/patched-rollout.ts.txt', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const workflowCode = () =>
  Object.fromEntries(
    readdirSync(WORKFLOWS)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => [`src/workflows/${f}`, readFileSync(WORKFLOWS + f, 'utf8')]),
  );

describe('patches of workflow code', () => {
  it('every patch the workflows use has a record, and none has outlived the release that removes it', () => {
    expect(patchProblems({ code: workflowCode(), records: PATCHES, version })).toEqual([]);
  });

  it('fails once a patch outlives its release (a fixture: a rollout change patched in 0.2.0, to go in 0.3.0)', () => {
    const code = { 'rollout-workflow.ts': readFileSync(FIXTURE, 'utf8') };
    const records = { 'rollout-wave-jitter': { since: '0.2.0', removeIn: '0.3.0', why: 'waves start with jitter' } };
    expect(patchProblems({ code, records, version: '0.2.4' })).toEqual([]);
    expect(patchProblems({ code, records, version: '0.3.0' })).toEqual([
      'patch "rollout-wave-jitter" outlived its release: its record says 0.3.0 removes it, and the package is 0.3.0; ' +
        'remove the patched() branch (keep the patched code) and the record',
    ]);
  });

  it('fails for a patch without a record, a record without a patch, and an id it cannot read', () => {
    const code = { 'a.ts': "if (patched('unrecorded')) x(); if (deprecatePatch(id)) y();" };
    const records = { stale: { since: '0.1.0', removeIn: '9.0.0', why: 'gone' } };
    expect(patchProblems({ code, records, version: '0.1.0' })).toEqual([
      'a.ts: patch "unrecorded" has no record in src/workflows/patches.ts',
      'a.ts: deprecatePatch without a literal patch id: the check cannot follow it',
      'patch "stale" has a record but no code uses it: drop the record',
    ]);
  });
});
