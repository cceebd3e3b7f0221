/**
 * librdkafka's own test suite: the allow-list in librdkafka-suite.ts must pass against Apache Kafka;
 * against Fjord, tests not listed in LIBRDKAFKA_EXPECTED_FAILURES must pass, and listed ones must
 * still fail (checked with a short deadline, since a refused or unsupported API fails fast).
 *
 * The two passes run at the same time, each against its own broker: the suite's tests spend most
 * of their time waiting on the broker and on their own timers, not on the CPU, so the file takes
 * about as long as the slower pass instead of the sum of both.
 */
import { afterAll, beforeAll, describe, inject, test } from 'vitest';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker.js';
import { LIBRDKAFKA_EXPECTED_FAILURES } from './expected-failures.js';
import { LIBRDKAFKA_TESTS, runLibrdkafkaTests, summaryLine, type LibrdkafkaResult } from './librdkafka-suite.js';
import { recordEntry } from './lib/report.js';
import { useFjordNode } from './lib/scenario.js';

function expectedReason(id: string): string | undefined {
  return LIBRDKAFKA_EXPECTED_FAILURES[id];
}

function show(label: string) {
  return (r: LibrdkafkaResult): void => console.log(`[librdkafka ${label}] ${r.id} ${r.status} ${r.seconds}s  ${r.logFile}`);
}

/**
 * Apache Kafka's final result for each test, for the Fjord pass running beside it: undefined when
 * Kafka produced none (it did not start, or its pass ended early).
 */
function kafkaOutcomes(): { get(id: string): Promise<LibrdkafkaResult | undefined>; settle(id: string, r: LibrdkafkaResult | undefined): void; settleRest(): void } {
  const settlers = new Map<string, (r: LibrdkafkaResult | undefined) => void>();
  const outcomes = new Map<string, Promise<LibrdkafkaResult | undefined>>();
  for (const t of LIBRDKAFKA_TESTS) outcomes.set(t.id, new Promise((resolve) => settlers.set(t.id, resolve)));
  return {
    get: (id) => outcomes.get(id) ?? Promise.resolve(undefined),
    settle: (id, r) => {
      settlers.get(id)?.(r);
      settlers.delete(id);
    },
    settleRest: () => {
      for (const resolve of settlers.values()) resolve(undefined);
      settlers.clear();
    },
  };
}

const totalTimeout = LIBRDKAFKA_TESTS.reduce((s, t) => s + t.timeoutS, 0) * 1000 + 60_000;

describe('librdkafka test suite (v2.15.1)', () => {
  const fjord = useFjordNode();
  // A broker of its own: 0081 alters broker-level configs (e.g. log.cleanup.policy), which would
  // change what other files observe on the shared broker. For the same reason each broker runs
  // one test at a time.
  let kafka: KafkaBroker | undefined;
  beforeAll(async () => {
    kafka = await startKafkaBroker({ version: inject('kafkaVersion') });
  });
  afterAll(async () => {
    await kafka?.stop();
  });
  const kafkaOutcome = kafkaOutcomes();

  test.concurrent('the allow-list passes against Apache Kafka', async ({ expect }) => {
    try {
      if (kafka === undefined) throw new Error('Apache Kafka did not start');
      const opts = { kafkaVersion: inject('kafkaVersion'), label: kafka.name, onResult: show(kafka.name) };
      const results: LibrdkafkaResult[] = [];
      for (const t of LIBRDKAFKA_TESTS) {
        let [r] = await runLibrdkafkaTests(kafka.bootstrap, [t], opts);
        // Apache Kafka is the reference here, not what is under test: a test it fails once (0011's
        // delivery order on a loaded machine, say) runs once more, and only a second failure fails
        // the baseline. Fjord gets no second run.
        if (r !== undefined && r.status !== 'PASSED') {
          console.log(`[librdkafka ${kafka.name}] running ${t.id} again after one failure`);
          [r] = await runLibrdkafkaTests(kafka.bootstrap, [t], opts);
        }
        kafkaOutcome.settle(t.id, r);
        if (r !== undefined) results.push(r);
      }
      console.log(summaryLine(results));
      expect(results.filter((r) => r.status !== 'PASSED').map((r) => `${r.id} ${r.status} (${r.logFile})`)).toEqual([]);
    } finally {
      kafkaOutcome.settleRest();
    }
  }, totalTimeout);

  test.concurrent('against Fjord: passes outside the expected-failure list, fails on it', async ({ expect }) => {
    const problems: string[] = [];
    let node;
    try {
      node = fjord.get();
    } catch (e) {
      // No node to run against: every test fails for that one reason.
      for (const t of LIBRDKAFKA_TESTS) {
        const reason = expectedReason(t.id);
        recordEntry({
          id: `librdkafka/${t.id}`,
          status: reason === undefined ? 'fjord-failed' : 'fjord-failed (expected)',
          fjordError: (e as Error).message,
          ...(reason === undefined ? {} : { expectedReason: reason }),
        });
        if (reason === undefined) problems.push(`${t.id}: ${(e as Error).message.split('\n')[0]}`);
      }
      console.log(`fjord librdkafka run: 0 passed, ${LIBRDKAFKA_TESTS.length} failed (node not started)`);
      expect(problems).toEqual([]);
      return;
    }
    const results: LibrdkafkaResult[] = [];
    // Each report entry names Kafka's result too, so it is written once the Kafka pass has that test.
    const entries: Promise<void>[] = [];
    for (const t of LIBRDKAFKA_TESTS) {
      const reason = expectedReason(t.id);
      // An expected failure gets twice Kafka's time (at least 20 s): enough to notice that it
      // started passing, without waiting out the suite's long timeouts on a node that hangs.
      const maxTimeoutS = reason === undefined ? undefined : Math.max(20, 2 * ((await kafkaOutcome.get(t.id))?.seconds ?? 30));
      const [r] = await runLibrdkafkaTests(node.bootstrap, [t], {
        kafkaVersion: inject('kafkaVersion'),
        label: 'fjord',
        onResult: show('fjord'),
        ...(maxTimeoutS === undefined ? {} : { maxTimeoutS }),
      });
      if (r === undefined) continue;
      results.push(r);
      const passed = r.status === 'PASSED';
      entries.push(
        kafkaOutcome.get(t.id).then((k) =>
          recordEntry({
            id: `librdkafka/${t.id}`,
            status: passed ? 'same' : reason === undefined ? 'fjord-failed' : 'fjord-failed (expected)',
            kafka: k?.status === 'PASSED' ? 'PASSED' : 'not PASSED',
            fjord: r.status,
            ...(passed ? {} : { fjordError: `${r.status}, see ${r.logFile}` }),
            ...(reason === undefined ? {} : { expectedReason: reason }),
          }),
        ),
      );
      if (passed && reason !== undefined) problems.push(`${t.id} now passes against Fjord: remove it from test/interop/expected-failures.ts`);
      if (!passed && reason === undefined) problems.push(`${t.id} ${r.status} (${r.logFile})`);
    }
    console.log(`fjord librdkafka run: ${summaryLine(results)}`);
    await Promise.all(entries);
    expect(problems).toEqual([]);
  }, totalTimeout);
});
