import { defineConfig } from 'vitest/config';

// The integration files in lane B: they run beside lane A's, one at a time each, on a cluster
// of their own in the shared stack (test/global-setup.ts). Chosen to even out the two lanes'
// time; rbac and deploy stay together (both set up kcp-system).
const LANE_B_FILES = [
  'cluster-access',
  'cli',
  'rollouts',
  'secret-scan',
  'failover',
  'metrics',
  'truthful-status',
  'durability',
  'defects',
  'shared-cluster',
  'rbac',
  'deploy',
  'registry-auth',
  'stored-versions',
].map((f) => `test/integration/${f}.test.ts`);

const integration = {
  // One local stack (API server, Temporal, registry) for the whole run, shared by the files.
  globalSetup: ['test/global-setup.ts'],
  testTimeout: 120_000,
  hookTimeout: 180_000,
  // The files of a lane share its cluster on a 2-core machine: one after another.
  fileParallelism: false,
};

export default defineConfig({
  test: {
    reporters: ['default'],
    // Stopping the shared stack (API server, etcd, Temporal) takes a few seconds.
    teardownTimeout: 60_000,
    // Unit files, and the two integration lanes beside them.
    maxWorkers: 3,
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
          exclude: LANE_B_FILES,
          ...integration,
        },
      },
      {
        extends: true,
        test: { name: 'integration-b', include: LANE_B_FILES, ...integration },
      },
    ],
  },
});
