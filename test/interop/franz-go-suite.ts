/**
 * franz-go's own kgo tests (its `pkg/kgo/*_test.go`, compiled unchanged by setup.sh), run against one
 * broker. The tests find the broker in KGO_SEEDS; KGO_TEST_RF=1 because both targets are one node,
 * and KGO_TEST_RECORDS bounds the ETL tests' volume (a knob of the suite itself) so a run takes
 * minutes. Tests that need no broker run too and pass on both; the comparison is what matters.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { FRANZ_GO_KGO_DIR, FRANZ_GO_TEST_BINARY, REPORT_DIR } from './lib/paths.js';

export type FranzGoStatus = 'PASS' | 'FAIL' | 'SKIP';

export interface FranzGoRun {
  /** Top-level test name → its outcome (subtests are folded into their parent). */
  readonly results: ReadonlyMap<string, FranzGoStatus>;
  readonly logFile: string;
  readonly seconds: number;
}

/** Records each of the ETL tests produces and consumes. */
const RECORDS = 20_000;
const SUITE_TIMEOUT_S = 900;

/** `--- PASS: TestName (1.23s)` at the start of a line: a top-level result of `go test -v`. */
const RESULT = /^--- (PASS|FAIL|SKIP): (\S+) \(/;

export function parseGoTestOutput(text: string): Map<string, FranzGoStatus> {
  const out = new Map<string, FranzGoStatus>();
  for (const line of text.split('\n')) {
    const m = RESULT.exec(line);
    if (m) out.set(m[2]!, m[1] as FranzGoStatus);
  }
  return out;
}

export async function runFranzGoTests(bootstrap: string, label: string): Promise<FranzGoRun> {
  const logFile = join(REPORT_DIR, `franz-go-${label}.log`);
  const log = createWriteStream(logFile);
  const started = Date.now();
  let text = '';
  await new Promise<void>((resolve, reject) => {
    const child = spawn(FRANZ_GO_TEST_BINARY, ['-test.v', `-test.timeout=${SUITE_TIMEOUT_S}s`, '-test.parallel=4'], {
      cwd: FRANZ_GO_KGO_DIR,
      env: { ...process.env, KGO_SEEDS: bootstrap, KGO_TEST_RF: '1', KGO_TEST_RECORDS: String(RECORDS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const take = (chunk: Buffer): void => {
      text += chunk.toString();
      log.write(chunk);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', reject);
    // `go test` exits 1 when any test fails; the per-test lines are what is compared.
    child.once('close', () => resolve());
  });
  await new Promise((r) => log.end(r));
  return { results: parseGoTestOutput(text), logFile, seconds: Math.round((Date.now() - started) / 1000) };
}

export function countOf(run: FranzGoRun): Record<FranzGoStatus, number> {
  const c: Record<FranzGoStatus, number> = { PASS: 0, FAIL: 0, SKIP: 0 };
  for (const s of run.results.values()) c[s]++;
  return c;
}
