/**
 * The differential report: each test file records, per scenario, what the client observed against
 * Apache Kafka and against Fjord (or why Fjord failed); the global teardown renders one Markdown file.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Difference } from './differential.js';
import { REPORT_DIR } from './paths.js';

export interface ReportEntry {
  readonly id: string;
  /** 'same' | 'differs' | 'fjord-failed (expected)' | 'fjord-failed' | 'kafka-failed' */
  readonly status: string;
  readonly kafka?: unknown;
  readonly fjord?: unknown;
  readonly fjordError?: string;
  readonly expectedReason?: string;
  readonly diffs?: readonly Difference[];
}

export function recordEntry(entry: ReportEntry): void {
  writeFileSync(join(REPORT_DIR, `${entry.id.replace(/[^a-zA-Z0-9_.-]/g, '_')}.json`), JSON.stringify(entry, null, 1));
}

/** The first line, or the first two when the first only introduces what follows (a diff). */
function firstLine(s: string | undefined): string {
  const lines = (s ?? '').split('\n');
  const head = lines[0] ?? '';
  return (head.endsWith(':') && lines[1] !== undefined ? `${head} ${lines[1].trim()}` : head).slice(0, 300);
}

export function writeDifferentialReport(): string {
  const entries: ReportEntry[] = [];
  for (const f of existsSync(REPORT_DIR) ? readdirSync(REPORT_DIR).sort() : []) {
    if (f.endsWith('.json')) entries.push(JSON.parse(readFileSync(join(REPORT_DIR, f), 'utf8')) as ReportEntry);
  }
  const count = (s: string): number => entries.filter((e) => e.status === s).length;
  const lines = [
    '# Differential report: Apache Kafka vs Fjord',
    '',
    `${entries.length} scenarios: ${count('same')} same, ${count('differs')} differ, ` +
      `${count('fjord-failed (expected)')} fail on Fjord as expected, ${count('fjord-failed')} fail on Fjord unexpectedly, ` +
      `${count('kafka-failed')} failed on Apache Kafka.`,
    '',
    '| scenario | status | detail |',
    '|---|---|---|',
  ];
  for (const e of entries) {
    const detail =
      e.status === 'fjord-failed (expected)'
        ? `${e.expectedReason ?? ''} — observed: ${firstLine(e.fjordError)}`
        : e.status === 'fjord-failed'
          ? firstLine(e.fjordError)
          : e.diffs && e.diffs.length > 0
            ? `${e.diffs.length} differences (${e.diffs.filter((d) => d.accepted !== null).length} accepted)`
            : '';
    lines.push(`| ${e.id} | ${e.status} | ${detail.replace(/\|/g, '\\|')} |`);
  }
  for (const e of entries.filter((x) => x.diffs && x.diffs.length > 0)) {
    lines.push('', `## ${e.id}`, '', '```');
    for (const d of e.diffs ?? []) lines.push(`${d.accepted === null ? '!' : '~'} ${d.path}: kafka=${d.kafka} fjord=${d.fjord}${d.accepted === null ? '' : ` (accepted: ${d.accepted})`}`);
    lines.push('```');
  }
  const file = join(REPORT_DIR, '..', 'differential-report.md');
  writeFileSync(file, lines.join('\n') + '\n');
  console.log(lines.slice(0, 3 + 3 + entries.length).join('\n'));
  return file;
}
