// ESLint flat config. Besides the usual checks it enforces the layer rules of
// docs/contributor/architecture.md: which folder of src/ may import which (each rule has a test in
// test/unit/layers.test.ts that a violating import fails). The workflow block is also the
// determinism guard: workflow code runs in Temporal's sandbox and is replayed, so it must not
// reach Node built-ins, the Kubernetes client or activity implementations (those are imported
// with `import type` only). No file may import itself back through others (`klm/no-import-cycle`,
// eslint-rules/no-import-cycle.js; its test is in test/unit/layers.test.ts too).
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { noImportCycle } from './eslint-rules/no-import-cycle.js';

const nodeBuiltins = [...new Set(builtinModules.flatMap((m) => [m, `node:${m}`, `${m}/*`, `node:${m}/*`]))];

/** The folders of src/ and, for each, the folders of src/ it may import (besides itself). */
const LAYERS = {
  api: { may: [], why: 'src/api is the leaf: the v1beta2 types, names and reasons import nothing of ours' },
  contract: { may: ['api'], why: 'the contract imports nothing of ours but src/api' },
  decisions: { may: ['api', 'contract'], why: 'decisions are pure: they import only src/api and src/contract' },
  workflows: {
    may: ['api', 'contract', 'decisions'],
    why: 'workflows interpret decisions: they import src/api, src/contract and src/decisions, activities as types only',
  },
  infra: {
    may: ['api', 'contract'],
    why: 'shared infrastructure (config, metrics) is a leaf over src/api and src/contract',
  },
  oci: { may: ['api'], why: 'the OCI client knows nothing of the lifecycle' },
  k8s: { may: ['api'], why: 'the Kubernetes clients know nothing of the lifecycle' },
  temporal: { may: ['api'], why: 'Temporal plumbing knows only src/api' },
  publish: { may: ['api', 'oci'], why: 'module publishing uses the OCI client and the API types only' },
  manifests: {
    may: ['api', 'k8s'],
    why: "a manifest's objects into a cluster (parse, order, CRDs, prune) serve the worker and the command line alike: they import src/api and src/k8s only",
  },
  activities: {
    may: ['api', 'contract', 'decisions', 'infra', 'k8s', 'manifests', 'oci'],
    why: 'activities do I/O over the clients and the decisions, never workflow, bridge or worker code',
  },
  starter: {
    may: ['api', 'contract', 'decisions', 'infra', 'k8s', 'temporal'],
    why: 'the bridge routes watch events to signals; it imports no workflow or activity code',
  },
  workers: {
    may: ['api', 'contract', 'infra', 'k8s', 'temporal', 'activities'],
    why: 'the worker registers workflows by path and activities by import; it imports no workflow code',
  },
  localstack: {
    may: ['api', 'infra', 'k8s', 'temporal'],
    why: 'the local stack runs servers; it knows nothing of the lifecycle',
  },
  samples: {
    may: ['api', 'k8s', 'publish'],
    why: 'the samples publish modules and act as their managers; they know nothing of the lifecycle',
  },
  cli: {
    may: [
      'api',
      'contract',
      'decisions',
      'infra',
      'k8s',
      'manifests',
      'oci',
      'temporal',
      'publish',
      'starter',
      'workers',
      'localstack',
      'samples',
    ],
    why: 'the command line composes the processes; it never imports workflow or activity code (the worker it starts brings its activities)',
  },
};

const determinism = [
  ...nodeBuiltins.map((name) => ({ name, message: 'Workflows must be deterministic: no Node built-ins.' })),
  { name: '@kubernetes/client-node', message: 'Workflows must not talk to Kubernetes: use an activity.' },
  { name: '@temporalio/activity', message: 'Activity APIs do not belong in workflow code.' },
  { name: '@temporalio/worker', message: 'Worker APIs do not belong in workflow code.' },
  { name: '@temporalio/client', message: 'Use @temporalio/workflow APIs inside workflows.' },
];

const purity = [
  ...nodeBuiltins.map((name) => ({ name, message: 'Decisions are pure: no Node built-ins.' })),
  ...[
    '@kubernetes/client-node',
    '@temporalio/activity',
    '@temporalio/worker',
    '@temporalio/client',
    '@temporalio/workflow',
    '@temporalio/common',
  ].map((name) => ({ name, message: 'Decisions are pure: no Temporal or Kubernetes APIs.' })),
];

/** The import restrictions of one layer. */
function layerRule(layer) {
  const { may, why } = LAYERS[layer];
  const banned = Object.keys(LAYERS).filter((other) => other !== layer && !may.includes(other));
  const patterns = banned.map((other) => ({
    group: [`**/${other}`, `**/${other}/**`],
    ...(layer === 'workflows' && other === 'activities' ? { allowTypeImports: true } : {}),
    message: `Layer rule: ${why}.`,
  }));
  const paths = layer === 'workflows' ? determinism : layer === 'decisions' ? purity : [];
  return ['error', { paths, patterns }];
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'bench/results/**', 'test/replay/histories/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs', 'bin/*.mjs', 'eslint-rules/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Size rules, errors for src/ (tests excepted): 400 lines of code per file (blank lines and
    // comments not counted), 80 per function, complexity 20 (upstream lifecycle-manager's
    // golangci-lint: funlen 80, cyclop 20). Above them sit the files that hold more than one
    // concept and the functions whose branches a reader cannot hold at once: split them by concept
    // (docs/contributor/architecture.md), extract named steps or a table; never hide a branch to pass.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 20],
    },
  },
  {
    // Prettier lays code out in 120 columns but leaves strings and comments as they are: no line
    // of them over 160 (split a message into parts, wrap a comment); a regular expression may be
    // longer, as it cannot be split without losing its literal form.
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    rules: { 'max-len': ['error', { code: 160, ignoreRegExpLiterals: true, ignoreUrls: true }] },
  },
  {
    // One direction between any two modules: a circle means a type or function sits in the wrong file.
    files: ['**/*.ts'],
    plugins: { klm: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'klm/no-import-cycle': 'error' },
  },
  ...Object.keys(LAYERS).map((layer) => ({
    files: [`src/${layer}/**/*.ts`],
    rules: { 'no-restricted-imports': 'off', '@typescript-eslint/no-restricted-imports': layerRule(layer) },
  })),
  {
    // The web page runs in the browser, bundled alone by esbuild (src/cli/ui/page.ts), and sees the
    // DOM through its own tsconfig (src/cli/ui/app/tsconfig.json): it imports only its own modules.
    files: ['src/cli/ui/app/**/*.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./)|\\.\\./',
              message:
                'The web page runs in the browser, bundled alone: it imports its own modules (./…) only, ' +
                'no Node built-in, npm package or server code.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['process', 'Buffer', 'require', 'global', '__dirname', '__filename', 'setImmediate'].map((name) => ({
          name,
          message: 'The web page runs in the browser: no Node globals.',
        })),
      ],
    },
  },
  {
    // Workflow code in test fixtures runs in the sandbox too.
    files: ['test/**/*-workflows.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: determinism,
          patterns: [
            {
              group: [
                '**/activities',
                '**/activities/*',
                '**/k8s',
                '**/k8s/*',
                '**/oci',
                '**/oci/*',
                '**/localstack/*',
              ],
              allowTypeImports: true,
              message: 'Import activities and I/O code with `import type` only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/workflows/**/*.ts', 'test/**/*-workflows.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'process', message: 'No process access in workflows.' },
      ],
    },
  },
  {
    files: ['src/decisions/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Decisions are pure: no timers.' },
        { name: 'process', message: 'Decisions are pure: no process access.' },
        { name: 'fetch', message: 'Decisions are pure: no I/O.' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
  },
);
