import { defineConfig } from 'vitest/config';

/**
 * The fault suite (`npm run test:faults`, root only): real nodes and etcd in network namespaces,
 * one file at a time so two clusters never share the two cores' timing.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
