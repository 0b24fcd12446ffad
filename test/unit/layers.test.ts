// Every layer rule of docs/contributor/architecture.md is an ESLint rule (eslint.config.js); each row here
// lints a file of that layer with one import and expects the rule to fire, or not. So is the rule
// that no module imports itself back through others (`klm/no-import-cycle`).
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function restrictions(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  // ESLint prefixes the configured message with what was restricted; keep our part.
  return (result?.messages ?? [])
    .filter((m) => m.ruleId?.includes('no-restricted'))
    .map((m) => m.message.replace(/^.* is restricted from being used( by a pattern)?\. /, ''));
}

async function circles(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'klm/no-import-cycle').map((m) => m.message);
}

const use = (spec: string) => `import * as m from '${spec}';\nexport const x = m;\n`;

const PAGE_ALONE = 'The web page runs in the browser, bundled alone: it imports its own modules (./…) only';

// [layer, a file of it, an import it must not make, the rule's message]
const VIOLATIONS: [string, string, string, string][] = [
  ['api', 'src/api/shared.ts', '../contract/settings', 'Layer rule: src/api is the leaf'],
  [
    'contract',
    'src/contract/settings.ts',
    '../decisions/names',
    'Layer rule: the contract imports nothing of ours but src/api',
  ],
  ['decisions', 'src/decisions/names.ts', '../k8s/rest-client', 'Layer rule: decisions are pure'],
  ['decisions', 'src/decisions/names.ts', '../activities/index', 'Layer rule: decisions are pure'],
  ['decisions', 'src/decisions/names.ts', 'node:fs', 'Decisions are pure: no Node built-ins.'],
  [
    'decisions',
    'src/decisions/names.ts',
    '@temporalio/workflow',
    'Decisions are pure: no Temporal or Kubernetes APIs.',
  ],
  ['workflows', 'src/workflows/failure.ts', '../k8s/rest-client', 'Layer rule: workflows interpret decisions'],
  ['workflows', 'src/workflows/failure.ts', '../activities/index', 'Layer rule: workflows interpret decisions'],
  ['workflows', 'src/workflows/failure.ts', '../infra/config', 'Layer rule: workflows interpret decisions'],
  ['workflows', 'src/workflows/failure.ts', 'node:fs', 'Workflows must be deterministic: no Node built-ins.'],
  ['workflows', 'src/workflows/failure.ts', 'http', 'Workflows must be deterministic: no Node built-ins.'],
  [
    'workflows',
    'src/workflows/failure.ts',
    '@kubernetes/client-node',
    'Workflows must not talk to Kubernetes: use an activity.',
  ],
  ['workflows', 'src/workflows/failure.ts', '@temporalio/activity', 'Activity APIs do not belong in workflow code.'],
  ['infra', 'src/infra/config.ts', '../activities/index', 'Layer rule: shared infrastructure'],
  ['oci', 'src/oci/tar.ts', '../k8s/rest-client', 'Layer rule: the OCI client knows nothing of the lifecycle'],
  [
    'k8s',
    'src/k8s/kubeconfig.ts',
    '../contract/settings',
    'Layer rule: the Kubernetes clients know nothing of the lifecycle',
  ],
  [
    'temporal',
    'src/temporal/search-attributes.ts',
    '../k8s/rest-client',
    'Layer rule: Temporal plumbing knows only src/api',
  ],
  ['publish', 'src/publish/module.ts', '../k8s/rest-client', 'Layer rule: module publishing'],
  ['manifests', 'src/manifests/apply.ts', '../activities/failure', "Layer rule: a manifest's objects into a cluster"],
  ['manifests', 'src/manifests/apply.ts', '../contract/artifacts', "Layer rule: a manifest's objects into a cluster"],
  ['manifests', 'src/manifests/apply.ts', '../decisions/readiness', "Layer rule: a manifest's objects into a cluster"],
  ['activities', 'src/activities/events.ts', '../workflows/kyma-workflow', 'Layer rule: activities do I/O'],
  ['activities', 'src/activities/events.ts', '../starter/bridge', 'Layer rule: activities do I/O'],
  [
    'starter',
    'src/starter/signaller.ts',
    '../workflows/index',
    'Layer rule: the bridge routes watch events to signals',
  ],
  [
    'starter',
    'src/starter/signaller.ts',
    '../activities/index',
    'Layer rule: the bridge routes watch events to signals',
  ],
  ['workers', 'src/workers/worker.ts', '../workflows/index', 'Layer rule: the worker registers workflows by path'],
  ['localstack', 'src/localstack/log.ts', '../activities/index', 'Layer rule: the local stack runs servers'],
  ['samples', 'src/samples/fleet.ts', '../decisions/names', 'Layer rule: the samples publish modules'],
  ['cli', 'src/cli/klm.ts', '../workflows/index', 'Layer rule: the command line composes the processes'],
  [
    'cli',
    'src/cli/direct-install.ts',
    '../activities/install/render',
    'Layer rule: the command line composes the processes',
  ],
  ['web page', 'src/cli/ui/app/main.ts', '../server', PAGE_ALONE],
  ['web page', 'src/cli/ui/app/labels.ts', '../../../api/shared', PAGE_ALONE],
  ['web page', 'src/cli/ui/app/main.ts', './../page', PAGE_ALONE],
  ['web page', 'src/cli/ui/app/main.ts', 'node:fs', PAGE_ALONE],
  ['web page', 'src/cli/ui/app/call.ts', 'http', PAGE_ALONE],
  ['web page', 'src/cli/ui/app/main.ts', 'esbuild', PAGE_ALONE],
];

// [layer, a file of it, an import it may make]
const ALLOWED: [string, string, string][] = [
  ['contract', 'src/contract/settings.ts', '../api/reasons'],
  ['decisions', 'src/decisions/names.ts', '../contract/readiness'],
  ['workflows', 'src/workflows/failure.ts', '../decisions/module-state'],
  ['activities', 'src/activities/events.ts', '../decisions/readiness'],
  ['starter', 'src/starter/signaller.ts', '../decisions/workload'],
  ['workers', 'src/workers/worker.ts', '../activities/index'],
  ['workers', 'src/workers/main.ts', '../temporal/search-attributes'],
  ['starter', 'src/starter/main.ts', '../temporal/search-attributes'],
  ['cli', 'src/cli/klm.ts', '../starter/bridge'],
  ['cli', 'src/cli/klm.ts', '../workers/worker'],
  ['cli', 'src/cli/direct-install.ts', '../manifests/apply'],
  ['activities', 'src/activities/install/apply.ts', '../../manifests/apply'],
  ['manifests', 'src/manifests/apply.ts', '../k8s/rest-client'],
  ['manifests', 'src/manifests/apply.ts', '../api/object-id'],
  ['web page', 'src/cli/ui/app/main.ts', './modules-tab'],
  ['cli', 'src/cli/ui/server.ts', './page'],
];

describe('the layer rules', () => {
  it.each(VIOLATIONS)('%s: %s may not import %s', async (_layer, file, spec, message) => {
    const found = await restrictions(file, use(spec));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(message);
  });

  it.each(ALLOWED)('%s: %s may import %s', async (_layer, file, spec) => {
    expect(await restrictions(file, use(spec))).toEqual([]);
  });

  it('lets workflows import activities as types only', async () => {
    expect(
      await restrictions(
        'src/workflows/failure.ts',
        "import type { Activities } from '../activities/index';\nexport type X = Activities;\n",
      ),
    ).toEqual([]);
  });

  it('keeps Node globals out of the web page', async () => {
    expect(await restrictions('src/cli/ui/app/main.ts', 'export const x = process.env.HOME;\n')).toEqual([
      "Unexpected use of 'process'. The web page runs in the browser: no Node globals.",
    ]);
    expect(await restrictions('src/cli/ui/app/main.ts', 'export const x = document.title;\n')).toEqual([]);
  });

  it('holds test workflow fixtures to the determinism rule', async () => {
    expect(await restrictions('test/fixtures/roundtrip-workflows.ts', use('node:fs'))).toEqual([
      'Workflows must be deterministic: no Node built-ins.',
    ]);
    expect(
      await restrictions(
        'test/fixtures/roundtrip-workflows.ts',
        "import { sleep } from '@temporalio/workflow';\nexport async function w(): Promise<void> { await sleep(1); }\n",
      ),
    ).toEqual([]);
  });
});

// [a file, an import that would close a circle over the files on disk, where the named circle goes]
const CIRCLES: [string, string, string][] = [
  ['src/contract/readiness.ts', './signals', 'src/contract/signals.ts'],
  ['src/oci/registry-transport.ts', './registries', 'src/oci/registries.ts'],
  ['src/oci/errors.ts', './ocm', 'src/oci/ocm.ts → src/oci/registry-client.ts'],
  ['src/api/kyma.ts', '../decisions/names', 'src/decisions/names.ts'],
];

// [a file, an import in the same direction as those on disk]
const ONE_WAY: [string, string][] = [
  ['src/contract/signals.ts', './readiness'],
  ['src/oci/registries.ts', './registry-transport'],
  ['src/oci/registry-client.ts', './registry-transport'],
];

describe('no import circles', () => {
  it.each(CIRCLES)('%s may not import %s', async (file, spec, via) => {
    const found = await circles(file, use(spec));
    expect(found).toHaveLength(1);
    const [start, through] = [file, via].map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    expect(found[0]).toMatch(
      new RegExp(`^Import circle: ${start} → ${through}( → .*)? → ${start}\\. Move what both sides need`),
    );
  });

  it('counts type imports and re-exports', async () => {
    expect(
      await circles(
        'src/contract/readiness.ts',
        "import type { ModuleReport } from './signals';\nexport type X = ModuleReport;\n",
      ),
    ).toHaveLength(1);
    expect(await circles('src/contract/readiness.ts', "export { moduleReport } from './signals';\n")).toHaveLength(1);
  });

  it.each(ONE_WAY)('%s may import %s', async (file, spec) => {
    expect(await circles(file, use(spec))).toEqual([]);
  });
});
