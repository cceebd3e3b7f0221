/**
 * Writes the differential report, then what failed (test/helpers/failure-digest.ts), then closes the interop run with one plain `interop: N passed, N failed` line (vitest's own summary is
 * not in that form), counting every test of every file, failed hooks included as failures.
 */
import type { Reporter, TestModule } from 'vitest/node';
import { failureDigest } from '../helpers/failure-digest.js';
import { writeDifferentialReport } from './lib/report.js';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
      }
      if (m.state() === 'failed' && m.errors().length > 0) failed++;
      // A describe block whose hook failed: its tests were skipped, so they count as one failure.
      for (const suite of m.children.allSuites()) if (suite.errors().length > 0) failed++;
    }
    const file = writeDifferentialReport();
    console.log(`[interop] differential report: ${file}`);
    for (const line of failureDigest(testModules)) console.log(line);
    console.log(`interop: ${passed} passed, ${failed} failed`);
  }
}
