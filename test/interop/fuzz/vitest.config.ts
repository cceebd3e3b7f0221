import { defineConfig } from 'vitest/config';
import { ROOT } from '../lib/paths.js';

// `npm run fuzz:differential`: the fuzz file alone, without the interop suite's shared broker
// (the fuzz file starts its own Apache Kafka and Fjord).
export default defineConfig({
  root: ROOT,
  test: {
    include: ['test/interop/fuzz-differential.test.ts'],
    testTimeout: 0,
    hookTimeout: 600_000,
    pool: 'forks',
  },
});
