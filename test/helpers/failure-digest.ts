/**
 * What failed, printed once more after everything else a run prints: each failed test (and each
 * file whose hooks or imports failed) with the first lines of its error. A run's log is often read
 * from its end, where vitest's summary only counts the failures.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

const HEAD = 8;
const TAIL = 22;

interface ErrorLike {
  readonly message?: string;
  readonly stack?: string;
}

function excerpt(e: ErrorLike): string {
  const text = e.stack && e.message && e.stack.includes(e.message) ? e.stack : `${e.message ?? ''}\n${e.stack ?? ''}`;
  const all = text.trim().split('\n');
  const isFrame = (l: string): boolean => /^\s+at /.test(l);
  // The message's head and tail (a node's start failure ends with the log line that says why),
  // then the first few frames outside node_modules.
  const message = all.filter((l) => !isFrame(l));
  const kept = message.length > HEAD + TAIL ? [...message.slice(0, HEAD), `… ${message.length - HEAD - TAIL} lines …`, ...message.slice(-TAIL)] : message;
  const frames = all.filter((l) => isFrame(l) && !l.includes('node_modules') && !l.includes('(node:') && !l.includes('<anonymous>')).slice(0, 3);
  return [...kept, ...frames]
    .map((l) => l.trimStart())
    .map((l) => `    ${l.length > 400 ? `${l.slice(0, 400)}…` : l}`)
    .join('\n');
}

/** The digest's lines; empty when nothing failed. */
export function failureDigest(testModules: ReadonlyArray<TestModule>, root = process.cwd()): string[] {
  const out: string[] = [];
  for (const m of testModules) {
    const file = relative(root, m.moduleId);
    for (const e of m.errors()) out.push(`FAILED ${file} (outside any test)`, excerpt(e));
    // A failed beforeAll/afterAll of a describe block: its tests are skipped, the block failed.
    for (const suite of m.children.allSuites()) {
      for (const e of suite.errors()) out.push(`FAILED ${file} > ${suite.fullName} (a hook of the block)`, excerpt(e));
    }
    for (const t of m.children.allTests()) {
      const r = t.result();
      if (r.state !== 'failed') continue;
      out.push(`FAILED ${file} > ${t.fullName}`);
      for (const e of r.errors ?? []) out.push(excerpt(e));
    }
  }
  if (out.length > 0) out.unshift(`--- what failed (${out.filter((l) => l.startsWith('FAILED ')).length}) ---`);
  return out;
}

export default class FailureDigestReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    for (const line of failureDigest(testModules)) console.log(line);
  }
}
