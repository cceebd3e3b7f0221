// Writes random encodings of every message at every version (one JSON object per line) for
// CrossCheck.java, which parses them with Kafka's own generated classes and writes them back.
//   node bench/run.mjs test/protocol/codegen/java-cross-check/dump-samples.ts <out.jsonl> [perVersion]
import { writeFileSync } from 'node:fs';
import { crossCheckSamples } from './samples.js';

const out = process.argv[2] ?? '/tmp/fjord-samples.jsonl';
const lines = await crossCheckSamples(Number(process.argv[3] ?? 20));
writeFileSync(out, lines.join('\n') + '\n');
console.log(`${lines.length} samples → ${out}`);
