import { defineConfig } from 'vitest/config';
import FailureDigestReporter from './test/helpers/failure-digest.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/interop/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', new FailureDigestReporter()],
  },
});
