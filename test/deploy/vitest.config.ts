import { defineConfig } from 'vitest/config';

/** The container image's tests (`npm run test:image`): one file, run after the image is built. */
export default defineConfig({
  test: {
    include: ['test/deploy/image.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
