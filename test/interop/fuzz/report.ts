/** The fuzz report: counts, coverage, each difference with its request, both answers and its minimal sequence. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_TABLE } from '../../../src/protocol/generated/api-table.js';
import type { ConfigFinding, ConfigStats } from './config-fuzzer.js';
import type { FuzzResult } from './differential-fuzzer.js';
import type { MalformedResult } from './malformed-fuzzer.js';

const apiName = (k: string | number): string => API_TABLE[Number(k)]?.name ?? `key ${k}`;

export function fuzzSummary(seed: number, diffs: FuzzResult, config: { stats: ConfigStats; findings: ConfigFinding[] }, malformed: MalformedResult): string {
  const s = diffs.stats;
  const lines = [
    `fuzz seed ${seed}: ${s.sequences} sequences, ${s.requests} requests to the two brokers; ${s.covered.size} of ${s.pairs.length} (key, version) pairs both serve were sent`,
    `fuzz configs: ${config.stats.keys} keys, ${config.stats.requests} requests; ${config.findings.length} unexplained validation differences`,
    `fuzz malformed: ${malformed.frames} frames (${Object.entries(malformed.byKind).map(([k, n]) => `${k} ${n}`).join(', ')}); ${malformed.answered} answered, ${malformed.closed} closed; witness ${malformed.witnessRequests} requests; ${malformed.failures.length} failures`,
    `fuzz differences: ${diffs.findings.length} unexplained`,
  ];
  for (const f of diffs.findings) lines.push(`  ${f.signature}`);
  for (const f of config.findings) lines.push(`  config ${f.signature}`);
  for (const f of malformed.failures.slice(0, 20)) lines.push(`  malformed ${f.kind}: ${f.problem} (${f.frame.slice(0, 80)})`);
  return lines.join('\n');
}

export function writeFuzzReport(dir: string, seed: number, diffs: FuzzResult, config: { stats: ConfigStats; findings: ConfigFinding[] }, malformed: MalformedResult): string {
  mkdirSync(dir, { recursive: true });
  const s = diffs.stats;
  const out: string[] = ['# Differential fuzz report', '', '```', fuzzSummary(seed, diffs, config, malformed), '```', ''];
  const missing = s.pairs.filter((p) => !s.covered.has(p));
  out.push(`APIs only Apache Kafka serves: ${s.onlyKafka.map(apiName).join(', ') || 'none'}.`, '');
  out.push(`APIs only Fjord serves: ${s.onlyFjord.map(apiName).join(', ') || 'none'}.`, '');
  out.push(`(key, version) pairs both serve that this run did not reach: ${missing.join(', ') || 'none'}.`, '');
  out.push('## Differences', '');
  for (const f of diffs.findings) {
    out.push(`### ${f.signature}`, '', `Path \`${f.difference.path}\`: Kafka \`${JSON.stringify(f.difference.kafka)}\`, Fjord \`${JSON.stringify(f.difference.fjord)}\`.`, '');
    out.push('Request (as Kafka got it):', '```json', JSON.stringify(f.request.kafka, null, 1), '```');
    out.push('Kafka answered:', '```json', JSON.stringify(f.answers.kafka, null, 1), '```');
    out.push('Fjord answered:', '```json', JSON.stringify(f.answers.fjord, null, 1), '```');
    out.push('Minimal sequence (placeholders: $own, $fixture, $group, $txn; -77 = the producer id/epoch or generation the broker gave):', '```json', JSON.stringify(f.sequence, null, 1), '```', '');
  }
  out.push('## Config validation differences', '');
  for (const f of config.findings) out.push(`- ${f.signature}: Kafka ${f.kafka}, Fjord ${f.fjord}`);
  out.push('', '## Malformed frames', '');
  for (const f of malformed.failures) out.push(`- ${f.kind}: ${f.problem}\n  \`${f.frame}\``);
  const file = join(dir, `fuzz-report-${seed}.md`);
  writeFileSync(file, out.join('\n') + '\n');
  return file;
}
