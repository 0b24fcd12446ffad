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
          // The integration files' two pool slots, which the unit files share (Vitest runs projects of one maxWorkers together).
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/replay/record.test.ts'],
          // One local stack (Temporal, registry, etcd) for the whole run, shared by the files.
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Two files at a time, each on an API server of its own (test/global-setup.ts): the
          // files mostly wait on the servers, and one after another left the 2-core machine at
          // about a third of its CPU.
          maxWorkers: 2,
        },
      },
    ],
  },
});
