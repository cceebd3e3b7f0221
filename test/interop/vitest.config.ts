import { defineConfig } from 'vitest/config';
import { ROOT } from './lib/paths.js';
import SummaryReporter from './summary-reporter.js';

// One Apache Kafka broker (global setup) is shared by every file; files run one at a time because
// the machine has two cores and each scenario starts JVMs or native clients of its own.
export default defineConfig({
  root: ROOT,
  test: {
    include: ['test/interop/**/*.test.ts'],
    globalSetup: ['test/interop/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default', new SummaryReporter()],
  },
});
