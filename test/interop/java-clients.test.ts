/**
 * The Apache Kafka Java client (kafka-clients) through the scenario program: produce with each acks
 * level and codec, idempotent and transactional producers, read_committed, classic and KIP-848
 * consumer groups, and the Admin API. The same program also runs on kafka-clients 4.4.0, whose
 * client negotiates the 4.4 versions (ApiVersions v5 with the cluster and node ids, ListOffsets
 * v11, DeleteGroups v3, ...), for one producer of each kind, the groups and the Admin API.
 */
import { describe, expect } from 'vitest';
import { javaScenario } from './lib/java.js';
import { KAFKA_NEWEST_VERSION } from './lib/paths.js';
import { differentialTests, sharedKafka, useFjordNode, type Scenario } from './lib/scenario.js';

type Obs = Record<string, unknown>;

interface ConsumedRecord {
  partition: number;
  offset: number;
  key: string;
  value: string;
  timestamp: number;
  timestampType: string;
  headers: string[];
}

/** `java` runs kafka-clients 4.1; `java-4.4` the same program on kafka-clients 4.4.0. */
interface JavaClient {
  readonly prefix: string;
  readonly version?: string;
}
type Run = (name: string, bootstrap: string, opts: Readonly<Record<string, string>>) => Promise<Obs>;

function scenarios(client: JavaClient): Scenario<Obs>[] {
  const javaScenarioOf: Run = (name, bootstrap, opts) => javaScenario(name, bootstrap, opts, 120_000, client.version);
  return allScenarios(javaScenarioOf).map((s) => ({ ...s, id: s.id.replace(/^java\//, `${client.prefix}/`) }));
}

function produceScenario(javaScenario: Run, id: string, acks: string, compression: string, idempotent: boolean): Scenario<Obs> {
  const count = 30;
  return {
    id: `java/${id}`,
    run: (t, topic) =>
      javaScenario('produce', t.bootstrap, { topic, acks, compression, idempotent: String(idempotent), count: String(count) }),
    check(obs) {
      const consumed = obs.consumed as ConsumedRecord[];
      expect(consumed).toHaveLength(count);
      // Record i went to partition i % 3; within a partition, offsets count up from 0 in send order.
      for (const r of consumed) {
        const i = Number(r.key.slice(1));
        expect(r.partition).toBe(i % 3);
        expect(r.offset).toBe(Math.floor(i / 3));
        expect(r.value).toBe(`value-${i}-`.repeat(8));
        expect(r.timestamp).toBe(1_700_000_000_000 + i);
        expect(r.timestampType).toBe('CreateTime');
        expect(r.headers).toEqual([`i=${i}`]);
      }
      const produced = obs.produced as string[];
      expect(produced).toHaveLength(count);
      produced.forEach((po, i) => expect(po).toBe(acks === '0' ? `${i % 3}:-1` : `${i % 3}:${Math.floor(i / 3)}`));
    },
  };
}

// `javaScenario` here is the client-bound runner, so the scenario bodies read as before.
const allScenarios = (javaScenario: Run): Scenario<Obs>[] => [
  {
    id: 'java/cluster',
    run: (t) => javaScenario('cluster', t.bootstrap, {}),
    check(obs) {
      expect(obs).toEqual({ nodes: 1, hasClusterId: true, hasController: true });
    },
  },
  produceScenario(javaScenario, 'produce-acks1-none', '1', 'none', false),
  produceScenario(javaScenario, 'produce-acks0-gzip', '0', 'gzip', false),
  produceScenario(javaScenario, 'produce-acksall-snappy', 'all', 'snappy', false),
  produceScenario(javaScenario, 'produce-idempotent-lz4', 'all', 'lz4', true),
  produceScenario(javaScenario, 'produce-idempotent-zstd', 'all', 'zstd', true),
  {
    id: 'java/transactions',
    run: (t, topic) => javaScenario('transactions', t.bootstrap, { topic }),
    check(obs) {
      // a b c | commit marker 3 | x y aborted | abort marker 6 | d | commit marker 8
      expect(obs.read_committed).toEqual(['0:a', '1:b', '2:c', '7:d']);
      expect(obs.read_uncommitted).toEqual(['0:a', '1:b', '2:c', '4:x', '5:y', '7:d']);
      expect(obs.read_committedEndOffset).toBe(9);
      expect(obs.read_uncommittedEndOffset).toBe(9);
    },
  },
  {
    // Consume-transform-produce with sendOffsetsToTransaction, then a zombie fenced by a new
    // producer with the same transactional.id (transactions V2 on clients that see it finalized).
    id: 'java/transactions-offsets',
    run: (t, topic) => javaScenario('transactions-offsets', t.bootstrap, { topic }),
    check(obs) {
      expect(obs.inputRead).toBe(6);
      // out0 out1 out2 | commit marker 3 | out3 out4 out5 aborted | abort marker 7
      expect(obs.outputCommitted).toEqual(['0:out0', '1:out1', '2:out2']);
      expect(obs.committed).toBe(3);
      // Transactions V2: the zombie's produce is refused with the epoch the new producer's
      // InitProducerId bumped (V1 would have answered its AddPartitionsToTxn PRODUCER_FENCED).
      expect(obs.oldProducerAfterFence).toBe('InvalidProducerEpochException');
    },
  },
  ...(['classic', 'consumer'] as const).map(
    (protocol): Scenario<Obs> => ({
      id: `java/group-${protocol}`,
      run: (t, topic) => javaScenario('group', t.bootstrap, { topic, protocol }),
      check(obs) {
        expect(obs.consumed).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7']);
        expect(obs.assignmentSizes).toEqual([2, 2]);
        expect(obs.members).toBe(2);
        expect(obs.state).toBe('Stable');
        expect(obs.type).toBe(protocol === 'classic' ? 'Classic' : 'Consumer');
        expect(obs.committed).toEqual({ '0': 2, '1': 2, '2': 2, '3': 2 });
      },
    }),
  ),
  {
    id: 'java/admin',
    run: (t, topic) => javaScenario('admin', t.bootstrap, { topic }),
    check(obs) {
      expect(obs.createAgain).toBe('TopicExistsException');
      expect(obs.describeMissingTopic).toBe('UnknownTopicOrPartitionException');
      const configs = obs.configs as Record<string, string>;
      expect(configs['cleanup.policy']).toBe('compact (DYNAMIC_TOPIC_CONFIG)');
      expect(configs['retention.ms']).toBe('12345 (DYNAMIC_TOPIC_CONFIG)');
      const after = obs.configsAfterAlter as Record<string, string>;
      expect(after['retention.ms']).toBe('54321 (DYNAMIC_TOPIC_CONFIG)');
      expect(after['cleanup.policy']).toBe('delete (DEFAULT_CONFIG)');
      expect(obs.alterUnknownConfig).toBe('InvalidConfigurationException');
      expect(obs.shrinkPartitions).toBe('InvalidPartitionsException');
      expect(obs.partitions).toBe(3);
      expect(obs.lowWatermarkAfterDelete).toBe(2);
      expect(obs.listOffsets).toEqual({ earliest: 2, latest: 5, maxTimestamp: 4, forTimestamp3000: 2, forTimestamp9999: -1 });
      expect(obs.committedOffset).toBe(3);
      expect(obs.committedMetadata).toBe('meta');
      expect(obs.groupListed).toBe(true);
      expect(obs.deleteGroup).toBe('NONE');
      expect(obs.deleteTopic).toBe('NONE');
      expect(obs.deleteMissingTopic).toBe('UnknownTopicOrPartitionException');
    },
  },
];

// On 4.4.0: the scenarios whose requests 4.4 changed or that negotiate the most APIs.
const ON_NEWEST = new Set(['cluster', 'produce-acks1-none', 'produce-idempotent-zstd', 'transactions', 'transactions-offsets', 'group-classic', 'group-consumer', 'admin']);

describe('Java clients (kafka-clients)', () => {
  const fjord = useFjordNode();
  for (const s of scenarios({ prefix: 'java' })) differentialTests(s, sharedKafka, fjord);
  const newest = scenarios({ prefix: `java-${KAFKA_NEWEST_VERSION.replace(/\.0$/, '')}`, version: KAFKA_NEWEST_VERSION });
  for (const s of newest.filter((s) => ON_NEWEST.has(s.id.split('/')[1]!))) differentialTests(s, sharedKafka, fjord);
});
