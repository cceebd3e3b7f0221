// npm run fuzz:differential -- [--minutes N] [--seed S]: the differential and malformed-frame
// fuzzers for N minutes (default 10) from seed S (default: the time), report in .cache/interop/fuzz/.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, seed: { type: 'string' } } });
const minutes = Number(values.minutes);
const seed = values.seed ?? String(Date.now() % 2_147_483_647);
if (!(minutes > 0) || !Number.isInteger(Number(seed))) {
  console.error('usage: npm run fuzz:differential -- [--minutes N] [--seed S]');
  process.exit(2);
}
console.log(`fuzz: ${minutes} min, seed ${seed}`);
const r = spawnSync(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/interop/fuzz/vitest.config.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FJORD_FUZZ_MINUTES: String(minutes), FJORD_FUZZ_SEED: seed },
});
process.exit(r.status ?? 1);
