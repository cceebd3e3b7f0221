import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import FailureDigestReporter from './test/helpers/failure-digest.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/interop/**', 'test/deploy/image.test.ts', 'test/faults/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most files wait on nodes they start (sockets, timers, fsyncs) more than they compute, so two
    // files side by side fit even on two cores, where vitest's default (cores - 1) runs one.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', new FailureDigestReporter()],
  },
});
