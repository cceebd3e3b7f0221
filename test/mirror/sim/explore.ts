/**
 * Explores runs of ./simulation.ts with fast-check: each run's tape of decisions is generated
 * from a seed, and a tape that breaks an invariant is shrunk to a minimal one (shorter, smaller
 * decisions: fewer faults and commands, and everything else completing in order).
 */
import fc from 'fast-check';
import { runSimulation, type SimOptions } from './simulation.js';

export interface Failure {
  readonly seed: number;
  readonly violations: readonly string[];
  /** The minimal tape and the steps it takes. */
  readonly tape: readonly number[];
  readonly steps: readonly string[];
  /** What the nodes logged in the minimal run (state transitions, command answers). */
  readonly lines: readonly string[];
}

export interface Exploration {
  readonly runs: number;
  readonly steps: number;
  readonly failure: Failure | null;
}

const tapes = fc.array(fc.noBias(fc.nat({ max: 0x7fffffff })), { minLength: 1, maxLength: 900, size: 'max' });

/** `numRuns` runs from `seed`; the first failing one is shrunk (for at most `shrinkRuns` more runs). */
export async function explore(seed: number, numRuns: number, opts: SimOptions = {}, shrinkRuns = 400): Promise<Exploration> {
  let runs = 0;
  let steps = 0;
  let failures = 0;
  let shrinks = 0;
  const prop = fc.asyncProperty(tapes, async (tape) => {
    // Shrinking is bounded: once it has tried `shrinkRuns` tapes, the rest count as passing, and
    // the smallest failing tape so far is the answer.
    if (failures > 0 && ++shrinks > shrinkRuns) return true;
    const r = await runSimulation(tape, opts);
    runs++;
    steps += r.stepCount;
    if (r.violations.length > 0) failures++;
    return r.violations.length === 0;
  });
  const out = await fc.check(prop, { seed, numRuns });
  if (!out.failed || out.counterexample === null) return { runs, steps, failure: null };
  const [tape] = out.counterexample;
  const replay = await runSimulation(tape, { ...opts, keepLines: true });
  return { runs, steps, failure: { seed, violations: replay.violations, tape, steps: replay.steps, lines: replay.lines } };
}

export function describeFailure(f: Failure): string {
  return [
    `violating run: seed ${f.seed}, minimal tape of ${f.tape.length} decisions`,
    ...f.violations.map((v) => `  violation: ${v}`),
    '  steps:',
    ...f.steps.map((s) => `    ${s}`),
    `  tape: [${f.tape.join(',')}]`,
  ].join('\n');
}
