/**
 * The stock command-line tools from kafka-tools, run by their main classes (what bin/kafka-*.sh
 * start): kafka-topics, kafka-console-producer/consumer, kafka-consumer-groups, and the producer
 * and consumer perf tests (whose figures are printed, never asserted).
 */
import { describe, expect } from 'vitest';
import { javaTool, mustSucceed } from './lib/java.js';
import { differentialTests, sharedKafka, useFjordNode, type Scenario } from './lib/scenario.js';
import type { Target } from './lib/target.js';

const TOPICS = 'org.apache.kafka.tools.TopicCommand';
const PRODUCER = 'org.apache.kafka.tools.ConsoleProducer';
const CONSUMER = 'org.apache.kafka.tools.consumer.ConsoleConsumer';
const GROUPS = 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand';
const PRODUCER_PERF = 'org.apache.kafka.tools.ProducerPerformance';
const CONSUMER_PERF = 'org.apache.kafka.tools.ConsumerPerformance';

type Obs = Record<string, unknown>;

async function topics(t: Target, ...args: string[]): Promise<string> {
  return mustSucceed(`kafka-topics ${args.join(' ')}`, await javaTool(TOPICS, ['--bootstrap-server', t.bootstrap, ...args])).stdout;
}

/** `Topic: x  TopicId: y  PartitionCount: 3  ReplicationFactor: 1  Configs: a=b` → the fields that must match. */
function describeSummary(out: string): Obs {
  const head = out.split('\n').find((l) => l.includes('PartitionCount:')) ?? '';
  const field = (name: string): string => new RegExp(`${name}:\\s*([^\\t]*)`).exec(head)?.[1]?.trim() ?? '';
  const partitionLines = out.split('\n').filter((l) => /\tPartition: \d+/.test(l));
  return {
    partitionCount: Number(field('PartitionCount')),
    replicationFactor: Number(field('ReplicationFactor')),
    // Only the topic-level override the test set: the rest of the list mirrors broker settings.
    retentionMs: field('Configs').split(',').find((kv) => kv.startsWith('retention.ms=')) ?? '',
    leaders: partitionLines.map((l) => /Leader: (\S+)/.exec(l)?.[1] ?? '?'),
  };
}

async function produceLines(t: Target, topic: string, lines: readonly string[]): Promise<void> {
  mustSucceed(
    'kafka-console-producer',
    await javaTool(
      PRODUCER,
      ['--bootstrap-server', t.bootstrap, '--topic', topic, '--property', 'parse.key=true', '--property', 'key.separator=:'],
      { input: lines.join('\n') + '\n' },
    ),
  );
}

async function consumeLines(t: Target, topic: string, max: number, extra: readonly string[] = []): Promise<string[]> {
  const r = mustSucceed(
    'kafka-console-consumer',
    await javaTool(CONSUMER, [
      '--bootstrap-server', t.bootstrap, '--topic', topic, '--from-beginning', '--max-messages', String(max),
      '--timeout-ms', '30000', '--property', 'print.key=true', '--property', 'print.partition=true',
      '--property', 'print.offset=true', ...extra,
    ]),
  );
  return r.stdout.split('\n').filter((l) => l.startsWith('Partition:')).sort();
}

const LINES = ['alpha:1', 'bravo:2', 'charlie:3', 'delta:4', 'echo:5', 'foxtrot:6'];

const SCENARIOS: Scenario<Obs>[] = [
  {
    id: 'java-tools/kafka-topics',
    async run(t, topic) {
      await topics(t, '--create', '--topic', topic, '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=1000000');
      const listed = (await topics(t, '--list')).split('\n').includes(topic);
      const created = describeSummary(await topics(t, '--describe', '--topic', topic));
      await topics(t, '--alter', '--topic', topic, '--partitions', '5');
      const altered = describeSummary(await topics(t, '--describe', '--topic', topic));
      const dup = await javaTool(TOPICS, ['--bootstrap-server', t.bootstrap, '--create', '--topic', topic, '--partitions', '1']);
      await topics(t, '--delete', '--topic', topic);
      return { listed, created, altered, createDuplicateFails: dup.code !== 0 && /already exists/.test(dup.stdout + dup.stderr) };
    },
    check(obs) {
      expect(obs).toEqual({
        listed: true,
        created: { partitionCount: 3, replicationFactor: 1, retentionMs: 'retention.ms=1000000', leaders: ['1', '1', '1'] },
        altered: { partitionCount: 5, replicationFactor: 1, retentionMs: 'retention.ms=1000000', leaders: ['1', '1', '1', '1', '1'] },
        createDuplicateFails: true,
      });
    },
  },
  {
    id: 'java-tools/console-producer-consumer',
    async run(t, topic) {
      await topics(t, '--create', '--topic', topic, '--partitions', '2', '--replication-factor', '1');
      await produceLines(t, topic, LINES);
      return { consumed: await consumeLines(t, topic, LINES.length) };
    },
    check(obs) {
      const consumed = obs.consumed as string[];
      expect(consumed).toHaveLength(LINES.length);
      // The default partitioner hashes each key (murmur2) onto the 2 partitions; per partition, offsets from 0.
      const values = consumed.map((l) => l.split('\t').slice(-2).join(':')).sort();
      expect(values).toEqual([...LINES].sort());
      const perPartition = new Map<string, number[]>();
      for (const l of consumed) {
        const [p = '', o = ''] = l.split('\t');
        perPartition.set(p, [...(perPartition.get(p) ?? []), Number(o.replace('Offset:', ''))]);
      }
      for (const offsets of perPartition.values()) expect(offsets.sort((a, b) => a - b)).toEqual(offsets.map((_, i) => i));
    },
  },
  {
    id: 'java-tools/kafka-consumer-groups',
    async run(t, topic) {
      const group = `${topic}-g`;
      await topics(t, '--create', '--topic', topic, '--partitions', '2', '--replication-factor', '1');
      await produceLines(t, topic, LINES);
      // Consume 4 of 6 with auto-commit, which commits the consumed positions on close.
      await consumeLines(t, topic, 4, ['--group', group, '--consumer-property', 'max.poll.records=1']);
      const list = mustSucceed('kafka-consumer-groups --list', await javaTool(GROUPS, ['--bootstrap-server', t.bootstrap, '--list']));
      const describe = mustSucceed(
        'kafka-consumer-groups --describe',
        await javaTool(GROUPS, ['--bootstrap-server', t.bootstrap, '--describe', '--group', group]),
      );
      const rows = describe.stdout
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter((cols) => cols[0] === group)
        .map((cols) => ({ partition: Number(cols[2]), current: Number(cols[3]), logEnd: Number(cols[4]), lag: Number(cols[5]) }))
        .sort((a, b) => a.partition - b.partition);
      const totals = rows.reduce((acc, r) => ({ current: acc.current + r.current, logEnd: acc.logEnd + r.logEnd, lag: acc.lag + r.lag }), {
        current: 0,
        logEnd: 0,
        lag: 0,
      });
      return { listed: list.stdout.split('\n').includes(group), partitions: rows.length, totals };
    },
    check(obs) {
      expect(obs).toEqual({ listed: true, partitions: 2, totals: { current: 4, logEnd: 6, lag: 2 } });
    },
  },
  {
    id: 'java-tools/perf-test',
    async run(t, topic) {
      const n = 50_000;
      await topics(t, '--create', '--topic', topic, '--partitions', '2', '--replication-factor', '1');
      const prod = mustSucceed(
        'kafka-producer-perf-test',
        await javaTool(PRODUCER_PERF, [
          '--topic', topic, '--num-records', String(n), '--record-size', '100', '--throughput', '-1',
          '--producer-props', `bootstrap.servers=${t.bootstrap}`, 'acks=1', 'linger.ms=5',
        ]),
      );
      const cons = mustSucceed(
        'kafka-consumer-perf-test',
        await javaTool(CONSUMER_PERF, ['--bootstrap-server', t.bootstrap, '--topic', topic, '--messages', String(n), '--timeout', '30000']),
      );
      const summary = prod.stdout.trim().split('\n').pop() ?? '';
      const sent = Number(/^(\d+) records sent/.exec(summary)?.[1] ?? -1);
      // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ...
      const csv = cons.stdout.trim().split('\n').pop()?.split(',').map((s) => s.trim()) ?? [];
      const consumed = Number(csv[4] ?? -1);
      console.log(`[perf ${t.name}] producer: ${summary}`);
      console.log(`[perf ${t.name}] consumer: ${Number(csv[5]).toFixed(0)} msg/s, ${Number(csv[3]).toFixed(1)} MB/s`);
      return { sent, consumed };
    },
    check(obs) {
      expect(obs).toEqual({ sent: 50_000, consumed: 50_000 });
    },
  },
];

describe('Kafka command-line tools (kafka-tools)', () => {
  const fjord = useFjordNode();
  for (const s of SCENARIOS) differentialTests(s, sharedKafka, fjord);
});
