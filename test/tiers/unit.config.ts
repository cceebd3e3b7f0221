import { defineConfig } from 'vitest/config';
import { testsOfTier } from './tiers.js';

/** `npm run test:unit`: the unit tier (./tiers.ts): no socket, no other process, no root. */
export default defineConfig(async () => ({
  test: {
    include: await testsOfTier('unit'),
    testTimeout: 60_000,
    pool: 'forks',
  },
}));
