/**
 * Transactions V2 (KIP-890 part 2) with the Java 4.4 client on a three-node Fjord cluster (etcd,
 * three `fjord start` processes): the cluster finalizes transaction.version=2, so the producer
 * sends no AddPartitionsToTxn and the leaders of its partitions, most of them other nodes than its
 * transaction coordinator, add them at the coordinator over AddPartitionsToTxn v5.
 *
 * - A transactional producer writes transactions of ten values across three partitions led by
 *   nodes 1, 2 and 3, its coordinator on node 1; a read_committed group consumer reads along.
 *   Every commit bumps the producer epoch (V2). Node 1 is SIGKILLed mid-transaction: the producer
 *   goes on with the new coordinator and leaders (aborting what it must), and afterwards every
 *   committed value is in the log exactly once, none of an aborted transaction is visible, and
 *   the consumer saw every committed value.
 * - Consume-transform-produce with sendOffsetsToTransaction (TxnOffsetCommit v5 adding the group's
 *   partition at a coordinator that may live on another node), one transaction committed and one
 *   aborted, then a second producer with the same transactional.id fences the first as Kafka 4.4
 *   does (InvalidProducerEpochException).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeDescribeTransactionsRequest, type DescribeTransactionsRequestInput } from '../../src/protocol/generated/messages/describe-transactions-request.js';
import { decodeDescribeTransactionsResponse, type DescribeTransactionsResponse } from '../../src/protocol/generated/messages/describe-transactions-response.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { explained, javaFailoverClient, readAllValues } from './lib/failover-clients.js';
import { javaScenario } from './lib/java.js';
import { KAFKA_NEWEST_VERSION } from './lib/paths.js';

const { Kafka, logLevel } = kafkajs;
const TOPIC = 'txn-v2-spread';
const DESCRIBE_TXN: ApiSpec<DescribeTransactionsRequestInput, DescribeTransactionsResponse> = {
  apiKey: ApiKey.DescribeTransactions,
  versions: [0, 0],
  encode: encodeDescribeTransactionsRequest,
  decode: decodeDescribeTransactionsResponse,
};

let cluster: RunningCluster;
const clients: KafkaClient[] = [];
const bootstrap = (): string => cluster.bootstrap.join(',');
const live = (): string[] => cluster.nodes.filter((n) => n.running !== null).map((n) => n.bootstrap);
const raw = (): KafkaClient => {
  const c = new KafkaClient({ bootstrapServers: live(), clientId: 'cluster-txn-v2', requestTimeoutMs: 5000 });
  clients.push(c);
  return c;
};

/** Leader and ISR of each TOPIC partition. */
async function partitions(): Promise<{ leader: number; isr: number[] }[]> {
  const md = await raw().metadata([TOPIC]);
  const t = md.topics.find((x) => x.name === TOPIC);
  return [...(t?.partitions ?? [])].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => ({ leader: p.leaderId, isr: [...p.isrNodes].sort() }));
}

/** A key (keyType 0: group, 1: transactional id) whose coordinator is `nodeId`. */
async function coordinatedBy(nodeId: number, prefix: string, keyType: 0 | 1): Promise<string> {
  return eventually(`a key coordinated by node ${nodeId}`, async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `${prefix}-${i}`);
    const r = await raw().send(Apis.FindCoordinator, { keyType, coordinatorKeys: keys });
    if (r.coordinators.some((x) => x.errorCode !== ErrorCode.NONE)) return null;
    return r.coordinators.find((x) => x.nodeId === nodeId)?.key ?? null;
  }, 60_000);
}

/** The producer epoch the coordinator holds for `txnId` (asked of every live node; one answers). */
async function producerEpoch(txnId: string): Promise<number | null> {
  for (const n of cluster.nodes.filter((x) => x.running !== null)) {
    const c = new KafkaClient({ bootstrapServers: [n.bootstrap], clientId: 'cluster-txn-v2-describe', requestTimeoutMs: 5000 });
    try {
      const s = (await c.send(DESCRIBE_TXN, { transactionalIds: [txnId] })).transactionStates[0];
      if (s?.errorCode === 0) return s.producerEpoch;
    } catch {
      // a node on its way down
    } finally {
      c.close();
    }
  }
  return null;
}

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false } });
  const admin = new Kafka({ clientId: 'cluster-txn-v2-admin', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    // Partition p led by node p + 1, all three in every ISR.
    const replicaAssignment = [0, 1, 2].map((p) => ({ partition: p, replicas: [p + 1, ...[1, 2, 3].filter((id) => id !== p + 1)] }));
    await admin.createTopics({ topics: [{ topic: TOPIC, replicaAssignment, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  await eventually('TOPIC led by 1, 2, 3 with full ISRs', async () => {
    const ps = await partitions();
    return ps.length === 3 && ps.every((p, i) => p.leader === i + 1 && p.isr.length === 3) ? ps : null;
  }, 60_000);
}, 240_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await cluster?.destroy();
});

describe(`Java ${KAFKA_NEWEST_VERSION} transactions V2 on a three-node cluster`, () => {
  it('commits across partitions led by other nodes than the coordinator, and survives a SIGKILL of the coordinator mid-transaction', async () => {
    const txnId = await coordinatedBy(1, 'txn-v2-spread-txn', 1);
    const group = await coordinatedBy(2, 'txn-v2-spread-group', 0);
    const client = javaFailoverClient({ bootstrap: bootstrap(), topic: TOPIC, group, paceMs: 5, transactionalId: txnId }, KAFKA_NEWEST_VERSION);
    let killed = false;
    try {
      const before = await explained(client, eventually('committed transactions read back', async () => {
        const p = client.progress();
        return p.acked >= 200 && p.consumed >= 100 ? p : null;
      }, 90_000));
      // Transactions V2: every EndTxn bumped the epoch (V1 keeps the one InitProducerId gave).
      const epoch = await producerEpoch(txnId);
      expect(epoch).toBeGreaterThanOrEqual(Math.floor(before.acked / 10));

      await cluster.node(1).kill();
      killed = true;
      const atKill = client.progress();
      await explained(client, eventually('producing and consuming to go on after the kill', async () => {
        const p = client.progress();
        return p.acked >= atKill.acked + 300 && p.maxConsumed >= atKill.acked + 200 ? p : null;
      }, 90_000));
      const out = await client.stop();
      expect(out.errors).toEqual([]);

      const log = new Map<number, number>();
      for (const v of await readAllValues(live().join(','), TOPIC)) log.set(v, (log.get(v) ?? 0) + 1);
      expect(out.acked.filter((v) => !log.has(v))).toEqual([]);
      expect([...log].filter(([, n]) => n > 1)).toEqual([]);
      expect((out.aborted ?? []).filter((v) => log.has(v))).toEqual([]);
      const seen = new Set(out.consumed);
      expect(out.acked.filter((v) => !seen.has(v))).toEqual([]);
    } finally {
      client.abort();
      // Only a killed node is started again: starting a live one would hide the first failure.
      if (killed) await cluster.node(1).start();
    }
  }, 300_000);

  it('consume-transform-produce: offsets in the transaction, commit and abort, the old producer fenced', async () => {
    const obs = await javaScenario('transactions-offsets', bootstrap(), { topic: 'txn-v2-ctp' }, 120_000, KAFKA_NEWEST_VERSION);
    expect(obs.inputRead).toBe(6);
    expect(obs.outputCommitted).toEqual(['0:out0', '1:out1', '2:out2']);
    expect(obs.committed).toBe(3);
    expect(obs.oldProducerAfterFence).toBe('InvalidProducerEpochException');
  }, 180_000);
});
