import { defineConfig } from 'vitest/config';
import { testsOfTier } from './tiers.js';

/** `npm run test:integration`: the integration tier (./tiers.ts): nodes and clients in the test's own process. */
export default defineConfig(async () => ({
  test: {
    include: await testsOfTier('integration'),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
}));
