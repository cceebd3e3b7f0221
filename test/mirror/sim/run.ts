/**
 * `npm run simulate -- --seconds N [--seed S] [--without-build-step]`: explores simulated runs
 * of the mirror control plane (./simulation.ts) from seed S (default: from the clock) for N
 * seconds (default 60), 25 runs per seed, and prints the runs and steps; a violating run is shrunk
 * and printed with its seed and minimal steps, and the exit code is 1.
 *
 * `--without-build-step` leaves the metadata write's validation out of the simulated controller,
 * which shows what that validation guards against.
 */
import { describeFailure, explore } from './explore.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

const seconds = Number(arg('--seconds') ?? 60);
const firstSeed = Number(arg('--seed') ?? Date.now() % 1_000_000_000);
const opts = process.argv.includes('--without-build-step') ? { validate: null } : {};
const until = Date.now() + seconds * 1000;
let runs = 0;
let steps = 0;
let seed = firstSeed;
const started = Date.now();
console.log(`simulating from seed ${firstSeed} for ${seconds} s${'validate' in opts ? ' without the metadata write build step' : ''}`);
for (; Date.now() < until; seed++) {
  const r = await explore(seed, 25, opts);
  runs += r.runs;
  steps += r.steps;
  if (r.failure !== null) {
    console.log(describeFailure(r.failure));
    if (process.argv.includes('--verbose')) for (const l of r.failure.lines) console.log(`    ${l}`);
    console.log(`found after ${runs} runs, ${steps} steps, ${((Date.now() - started) / 1000).toFixed(1)} s (seeds ${firstSeed}..${seed})`);
    process.exit(1);
  }
}
console.log(`no violation: ${runs} runs, ${steps} steps, seeds ${firstSeed}..${seed - 1}, ${((Date.now() - started) / 1000).toFixed(1)} s`);
