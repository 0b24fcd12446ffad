// ESLint flat config. The workflow block is the determinism guard: workflow code runs in
// Temporal's sandbox and is replayed, so it must not reach Node built-ins, the Kubernetes
// client or activity implementations (those are imported with `import type` only).
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...new Set(builtinModules.flatMap((m) => [m, `node:${m}`, `${m}/*`, `node:${m}/*`]))];

export default tseslint.config(
  { ignores: ['node_modules/**', 'bench/results/**', 'test/replay/histories/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code anywhere (also test fixtures) runs in the sandbox.
    files: ['src/workflows/**/*.ts', 'test/**/*-workflows.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflows must be deterministic: no Node built-ins.' })),
            { name: '@kubernetes/client-node', message: 'Workflows must not talk to Kubernetes: use an activity.' },
            { name: '@temporalio/activity', message: 'Activity APIs do not belong in workflow code.' },
            { name: '@temporalio/worker', message: 'Worker APIs do not belong in workflow code.' },
            { name: '@temporalio/client', message: 'Use @temporalio/workflow APIs inside workflows.' },
          ],
          patterns: [
            { group: ['**/activities', '**/activities/*', '**/k8s', '**/k8s/*', '**/oci', '**/oci/*', '**/localstack/*'], allowTypeImports: true, message: 'Import activities and I/O code with `import type` only.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' }, { name: 'process', message: 'No process access in workflows.' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
  },
);
