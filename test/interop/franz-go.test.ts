/**
 * franz-go's own integration tests, side by side: the whole kgo test binary runs against Apache
 * Kafka and then against Fjord. Every test that passes on Kafka must pass on Fjord unless
 * FRANZ_GO_EXPECTED_FAILURES names it (then it must still fail, so the list stays true).
 */
import { describe, expect, test } from 'vitest';
import { FRANZ_GO_EXPECTED_FAILURES } from './expected-failures.js';
import { countOf, runFranzGoTests, type FranzGoRun } from './franz-go-suite.js';
import { recordEntry } from './lib/report.js';
import { FRANZ_GO_VERSION } from './lib/paths.js';
import { sharedKafka, useFjordNode } from './lib/scenario.js';

const summary = (label: string, run: FranzGoRun): string => {
  const c = countOf(run);
  return `[franz-go ${FRANZ_GO_VERSION} on ${label}] ${c.PASS} passed, ${c.FAIL} failed, ${c.SKIP} skipped in ${run.seconds}s (${run.logFile})`;
};

describe(`franz-go ${FRANZ_GO_VERSION} kgo test suite`, () => {
  const fjord = useFjordNode();
  let kafkaRun: FranzGoRun | undefined;

  test('runs against Apache Kafka', async () => {
    const kafka = sharedKafka();
    kafkaRun = await runFranzGoTests(kafka.bootstrap, kafka.name);
    console.log(summary(kafka.name, kafkaRun));
    // The binary ran its tests: an empty result would mean it never reached them.
    expect(kafkaRun.results.size).toBeGreaterThan(100);
  }, 1_000_000);

  test('against Fjord: every test that passes on Kafka passes, outside the expected-failure list', async () => {
    if (kafkaRun === undefined) throw new Error('the Apache Kafka run did not complete, so there is nothing to compare Fjord with');
    const run = await runFranzGoTests(fjord.get().bootstrap, 'fjord');
    console.log(summary('fjord', run));
    const problems: string[] = [];
    for (const [name, onKafka] of kafkaRun.results) {
      const onFjord = run.results.get(name) ?? 'FAIL';
      const reason = FRANZ_GO_EXPECTED_FAILURES[name];
      if (onKafka !== 'PASS') continue;
      recordEntry({
        id: `franz-go/${name}`,
        status: onFjord === 'PASS' ? 'same' : reason === undefined ? 'fjord-failed' : 'fjord-failed (expected)',
        kafka: onKafka,
        fjord: onFjord,
        ...(onFjord === 'PASS' ? {} : { fjordError: `${onFjord}, see ${run.logFile}` }),
        ...(reason === undefined ? {} : { expectedReason: reason }),
      });
      if (onFjord === 'PASS' && reason !== undefined) problems.push(`${name} now passes against Fjord: remove it from FRANZ_GO_EXPECTED_FAILURES`);
      if (onFjord !== 'PASS' && reason === undefined) problems.push(`${name} passes on Kafka, ${onFjord} on Fjord (${run.logFile})`);
    }
    expect(problems).toEqual([]);
  }, 1_000_000);
});
