/**
 * The shape every interop test file shares: each scenario runs against the shared Apache Kafka broker
 * (where it must pass: that proves the harness) and then against a Fjord node, where its observations
 * are compared with Kafka's, or, when listed in expected-failures.ts, it must still fail.
 */
import { afterAll, beforeAll, inject, test } from 'vitest';
import { EXPECTED_FAILURES } from '../expected-failures.js';
import { startFjordNode, type FjordNode, type FjordNodeOptions } from '../fjord-node.js';
import { diffObservations, formatDiff } from './differential.js';
import { recordEntry } from './report.js';
import type { Target } from './target.js';

export interface Scenario<T = unknown> {
  /** `<client>/<scenario>`, the key used by expected-failures.ts and known-differences.ts. */
  readonly id: string;
  /** Runs the scenario and returns what the client observed (JSON-comparable). */
  run(target: Target, topic: string): Promise<T>;
  /** Assertions on the observation that hold for any correct broker. */
  check(observation: T): void;
  readonly timeoutMs?: number;
}

const RUN = Date.now().toString(36);

/** A topic name unique to this run, scenario and target, so reruns never see old data. */
export function topicFor(id: string, target: Target): string {
  return `${id.replace(/[^a-zA-Z0-9]+/g, '-')}-${target.kind}-${RUN}`;
}

/** The broker started by the global setup (it is stopped there too). */
export function sharedKafka(): Target {
  const bootstrap = inject('kafkaBootstrap');
  const [host = '127.0.0.1', port = '0'] = bootstrap.split(':');
  return {
    name: `kafka-${inject('kafkaVersion')}`,
    kind: 'kafka',
    bootstrap,
    host,
    port: Number(port),
    dataDir: '',
    stop: async () => undefined,
  };
}

/** Starts one Fjord node for the calling test file; `get()` throws why it is not there. */
export function useFjordNode(opts: FjordNodeOptions = {}): { get(): FjordNode } {
  let node: FjordNode | undefined;
  let problem = 'not started';
  beforeAll(async () => {
    const buildProblem = inject('fjordBuildProblem');
    if (buildProblem !== '') {
      problem = `Fjord is not built: ${buildProblem}`;
      return;
    }
    try {
      node = await startFjordNode(opts);
    } catch (e) {
      problem = (e as Error).message;
    }
  });
  afterAll(async () => {
    await node?.stop();
  });
  return {
    get(): FjordNode {
      if (node === undefined) throw new Error(problem);
      return node;
    },
  };
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Declares the two tests of a scenario: on Apache Kafka (must pass), and on Fjord (must match
 * Kafka's observations up to the listed known differences, or fail if listed as expected to).
 */
export function differentialTests<T>(scenario: Scenario<T>, kafka: () => Target, fjord: { get(): Target }): void {
  let kafkaObservation: T | undefined;
  const timeout = scenario.timeoutMs ?? 180_000;

  test(`${scenario.id} on Apache Kafka`, async () => {
    const target = kafka();
    // Apache Kafka is the reference, not what is under test: a failure there (a client racing a
    // broker still settling) is retried once on a fresh topic, and shown, before it counts.
    const attempt = async (topic: string): Promise<T> => {
      const obs = await scenario.run(target, topic);
      scenario.check(obs);
      return obs;
    };
    try {
      kafkaObservation = await attempt(topicFor(scenario.id, target));
    } catch (e) {
      console.warn(`[interop] ${scenario.id} failed once on Apache Kafka, retrying on a fresh topic: ${message(e)}`);
      kafkaObservation = await attempt(topicFor(`${scenario.id}-again`, target));
    }
  }, timeout * 2);

  test(`${scenario.id} on Fjord`, async () => {
    const expected = EXPECTED_FAILURES[scenario.id];
    if (kafkaObservation === undefined) {
      recordEntry({ id: scenario.id, status: 'kafka-failed' });
      throw new Error(`${scenario.id} failed on Apache Kafka, so there is nothing to compare Fjord with`);
    }
    let failure: string | null = null;
    let fjordObs: T | undefined;
    let diffs: ReturnType<typeof diffObservations> = [];
    try {
      const target = fjord.get();
      fjordObs = await scenario.run(target, topicFor(scenario.id, target));
      diffs = diffObservations(scenario.id, kafkaObservation, fjordObs);
      scenario.check(fjordObs);
      const unaccepted = diffs.filter((d) => d.accepted === null);
      if (unaccepted.length > 0) failure = `observations differ from Apache Kafka:\n${formatDiff(diffs)}`;
    } catch (e) {
      failure = message(e);
    }
    const status =
      failure === null ? (diffs.length > 0 ? 'differs' : 'same') : expected !== undefined ? 'fjord-failed (expected)' : 'fjord-failed';
    recordEntry({
      id: scenario.id,
      status,
      kafka: kafkaObservation,
      ...(fjordObs === undefined ? {} : { fjord: fjordObs }),
      ...(failure === null ? {} : { fjordError: failure }),
      ...(expected === undefined ? {} : { expectedReason: expected }),
      diffs,
    });
    if (expected !== undefined) {
      if (failure === null) {
        throw new Error(`${scenario.id} now passes against Fjord: remove it from test/interop/expected-failures.ts`);
      }
      return;
    }
    if (failure !== null) throw new Error(failure);
  }, timeout);
}
