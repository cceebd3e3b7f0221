/**
 * The deterministic simulation of the mirror control plane (./simulation.ts) on a fixed set of
 * seeds: three destination nodes running the real manager, state machine, state actions,
 * coordinator and control plane, with the metadata log, leader moves, crashes and restarts, the
 * source cluster and every asynchronous step decided by a seeded tape. A violation prints the
 * seed and the minimal steps that reproduce it; `npm run simulate -- --seconds N` explores more.
 */
import { describe, expect, it } from 'vitest';
import { describeFailure, explore } from './explore.js';

const SEEDS = [1, 2, 3, 4];
const RUNS_PER_SEED = 250;

describe('the mirror control plane under simulated interleavings', () => {
  for (const seed of SEEDS) {
    it(`holds its invariants on seed ${seed}`, async () => {
      const r = await explore(seed, RUNS_PER_SEED);
      expect(r.failure === null ? null : describeFailure(r.failure)).toBeNull();
      expect(r.runs).toBe(RUNS_PER_SEED);
    }, 300_000);
  }
});
