import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default'],
    // Stopping the shared stack (API server, etcd, Temporal) takes a few seconds.
    teardownTimeout: 60_000,
    projects: [
      {
        extends: true,
        // The lint-rule test builds a TypeScript program first: seconds on a loaded machine.
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/replay/replay.test.ts', 'test/replay/patches.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/replay/record.test.ts'],
          // One local stack (API server, Temporal, registry) for the whole run, shared by the files.
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // The files share one stack on a 2-core machine: run them one after another.
          fileParallelism: false,
        },
      },
    ],
  },
});
