/**
 * The differential fuzzer against a real Apache Kafka broker and a Fjord node started with the
 * same settings, then the malformed-frame fuzzer against Fjord alone (test/interop/fuzz/). In the
 * interop suite it runs a fixed seed for a bounded time; `npm run fuzz:differential -- --minutes N
 * [--seed S]` runs it longer. Every difference not listed in known-differences.ts fails the test,
 * with the request, both answers and the shrunk sequence in .cache/interop/fuzz/.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFjordNode, type FjordNode } from './fjord-node.js';
import { runConfigFuzz } from './fuzz/config-fuzzer.js';
import { runDifferentialFuzz } from './fuzz/differential-fuzzer.js';
import { runMalformedFuzz } from './fuzz/malformed-fuzzer.js';
import { fuzzSummary, writeFuzzReport } from './fuzz/report.js';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker.js';
import { OUT } from './lib/paths.js';
import { ensureBuilt } from '../helpers/node.js';

/** The same settings on both sides (Kafka's harness defaults, which fjord-node.ts mirrors). */
const SETTINGS: Readonly<Record<string, string>> = {
  'num.partitions': '4',
  'offsets.topic.num.partitions': '10',
  'transaction.state.log.num.partitions': '4',
  'group.initial.rebalance.delay.ms': '0',
};

const minutes = Number(process.env['FJORD_FUZZ_MINUTES'] ?? '0');
const seed = Number(process.env['FJORD_FUZZ_SEED'] ?? '20261207');
// The fixed-seed run in the interop suite: 140 s of sequences, at most 30 s of config keys (about
// 20 s), 25 s of malformed frames; with the two brokers' start, about four minutes on two cores.
const budget = minutes > 0 ? { sequences: minutes * 60_000 * 0.75, configs: minutes * 60_000 * 0.1, malformed: minutes * 60_000 * 0.15 } : { sequences: 140_000, configs: 30_000, malformed: 25_000 };

let kafka: KafkaBroker | undefined;
let fjord: FjordNode | undefined;
beforeAll(async () => {
  ensureBuilt();
  [kafka, fjord] = await Promise.all([startKafkaBroker({ overrides: SETTINGS }), startFjordNode({ overrides: SETTINGS })]);
}, 180_000);
afterAll(async () => {
  await Promise.all([kafka?.stop(), fjord?.stop()]);
});

it(`answers every fuzzed request as Apache Kafka does, and survives malformed frames (seed ${seed})`, async () => {
  const k = kafka!;
  const f = fjord!;
  const log = (line: string): void => console.log(`[fuzz] ${line}`);
  // The fixed-seed run sends the same 250 random sequences every time (after the sweep of every
  // key and version); a longer run goes on until its time is up.
  // A broker that stops answering ends the run; say which one and why (its log's tail).
  const why = (e: unknown): Error => new Error(`${(e as Error).message}\nkafka: ${k.process.deadReason() ?? 'running'}\nfjord: ${f.process.deadReason() ?? 'running'}`);
  const diffs = await runDifferentialFuzz({ kafka: { name: 'kafka', port: k.port }, fjord: { name: 'fjord', port: f.port }, seed, timeLimitMs: budget.sequences, ...(minutes > 0 ? {} : { maxSequences: 250 }), log }).catch((e: unknown) => {
    throw why(e);
  });
  const config = await runConfigFuzz({ kafkaPort: k.port, fjordPort: f.port, fixtureTopic: 'fz-fixture', timeLimitMs: budget.configs });
  const malformed = await runMalformedFuzz({ port: f.port, seed, timeLimitMs: budget.malformed, served: diffs.stats.served, alive: () => f.process.deadReason() === null });
  const file = writeFuzzReport(join(OUT, 'fuzz'), seed, diffs, config, malformed);
  console.log(`${fuzzSummary(seed, diffs, config, malformed)}\nreport: ${file}`);
  expect(malformed.failures, 'malformed frames that got neither an error code nor a closed connection').toEqual([]);
  expect(f.process.deadReason()).toBeNull();
  expect(diffs.findings.map((x) => x.signature), 'unexplained differences (see the report)').toEqual([]);
  expect(config.findings.map((x) => `${x.signature}: kafka ${x.kafka}, fjord ${x.fjord}`), 'unexplained config validation differences').toEqual([]);
}, Math.max(600_000, minutes * 60_000 * 1.5));
