import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/interop/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One file per core (Vitest's default leaves one core idle, i.e. one file at a time on a 2-core
    // machine). The slowest files spend most of their time waiting on the nodes, brokers and clients
    // they start: run one at a time they kept about a third of one core busy.
    maxWorkers: '100%',
  },
});
