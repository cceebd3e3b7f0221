/**
 * The node-loss row (`--sections scale-loss`): a node of three is SIGKILLed while it leads about
 * a third of many small partitions, on Fjord (etcd) and on Apache Kafka (KRaft, combined mode),
 * both as cluster.ts starts them, with the stock session timeouts (9 s / 2 s).
 *
 * The estate: `partitions` partitions in topics of `partitionsPerTopic`, replication factor 3,
 * min.insync.replicas=2, so every node holds a replica of every partition. Before the kill one
 * record is written to every partition with acks=all, so each is known to be writable. The node
 * killed is the one leading the most partitions that is not the active controller (the quorum
 * leader DescribeQuorum names), as in cluster.ts's failover row: the row times the data plane's
 * recovery, not a controller election.
 *
 * Timed from the SIGKILL until every partition has accepted an acks=all write sent after it: the
 * partitions the dead node led need a new leader, and all of them need the dead follower out of
 * the ISR before an acks=all write can complete. Each pass reads every partition's leader with
 * Metadata from a surviving node and sends one small record to each partition not yet written
 * to, grouped by leader, with a produce timeout of PRODUCE_TIMEOUT_MS; a partition counts from
 * the answer that acknowledged its record. A partition whose write waits in the leader until the
 * ISR shrinks is answered then; one whose wait times out is written again in the next pass, so
 * the end time is late by at most a pass.
 */
import { performance } from 'node:perf_hooks';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { encodeDescribeQuorumRequest, type DescribeQuorumRequestInput } from '../../src/protocol/generated/messages/describe-quorum-request.js';
import { decodeDescribeQuorumResponse, type DescribeQuorumResponse } from '../../src/protocol/generated/messages/describe-quorum-response.js';
import { encodeProduceRequest, type ProduceRequestInput } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse, type ProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import type { ClusterUnderTest } from './cluster.js';

/** Produce v9-11: flexible, topics by name, answered by Kafka 4.1 and Fjord alike. */
const Produce: ApiSpec<ProduceRequestInput, ProduceResponse> = { apiKey: 0, versions: [9, 11], encode: encodeProduceRequest, decode: decodeProduceResponse };
/** DescribeQuorum v0: a broker forwards it to the controller quorum; its leader is the active controller. */
const DescribeQuorum: ApiSpec<DescribeQuorumRequestInput, DescribeQuorumResponse> = { apiKey: 55, versions: [0, 0], encode: encodeDescribeQuorumRequest, decode: decodeDescribeQuorumResponse };

/** How long a leader may hold an acks=all write waiting for its ISR before answering REQUEST_TIMED_OUT. */
const PRODUCE_TIMEOUT_MS = 500;
/** Partitions per Produce request, so that a pass at 10,000 partitions is several requests of about 100 KB. */
const PARTITIONS_PER_REQUEST = 1000;
/** Topics per CreateTopics request. */
const TOPICS_PER_CREATE = 50;
const PASS_PAUSE_MS = 50;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface NodeLoss {
  /** SIGKILL → every partition led by a live node and acknowledging an acks=all write. */
  readonly ms: number;
  readonly killed: number;
  /** The active controller, left alive (-1: the cluster did not say, and any node could be killed). */
  readonly controller: number;
  /** Partitions the killed node led. */
  readonly led: number;
  /** Passes over the partitions after the kill (each a Metadata request and the Produce requests). */
  readonly passes: number;
}

type Pending = Map<string, Set<number>>;

function countPending(pending: Pending): number {
  let n = 0;
  for (const s of pending.values()) n += s.size;
  return n;
}

/** Topics of `partitionsPerTopic` partitions, RF 3, min.insync.replicas=2, until every partition has a leader and three in sync. */
async function createEstate(client: KafkaClient, topics: readonly string[], partitionsPerTopic: number, deadlineMs: number): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  for (let i = 0; i < topics.length; i += TOPICS_PER_CREATE) {
    let batch = topics.slice(i, i + TOPICS_PER_CREATE);
    while (batch.length > 0) {
      const res = await client.send(Apis.CreateTopics, {
        topics: batch.map((name) => ({ name, numPartitions: partitionsPerTopic, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] })),
        timeoutMs: 120_000,
        validateOnly: false,
      });
      // 36 TOPIC_ALREADY_EXISTS: a request retried after its answer was lost. 38
      // INVALID_REPLICATION_FACTOR: a node of a loaded machine missed its session and was fenced
      // for a moment, leaving two; its topics are asked for again once it is back.
      const failed = res.topics.filter((t) => t.errorCode !== 0 && t.errorCode !== 36);
      if (failed.length > 0 && (failed.some((t) => t.errorCode !== 38) || performance.now() > deadline)) throw new Error(`node loss: CreateTopics failed: ${failed.map((t) => `${t.name} error ${t.errorCode}`).join(', ')}`);
      batch = failed.map((t) => t.name);
      if (batch.length > 0) await sleep(1000);
    }
  }
  for (;;) {
    const md = await client.metadata(topics).catch(() => null);
    const ready = md !== null && md.topics.every((t) => t.errorCode === 0 && t.partitions.length === partitionsPerTopic && t.partitions.every((p) => p.leaderId >= 0 && p.isrNodes.length === 3));
    if (ready) return;
    if (performance.now() > deadline) throw new Error(`node loss: ${topics.length * partitionsPerTopic} partitions not all led with three in sync after ${deadlineMs} ms`);
    await sleep(500);
  }
}

/**
 * Writes one record with acks=all to every partition of `topics` until each has acknowledged one,
 * never sending to `dead`; returns when the last was acknowledged (performance.now()) and the passes.
 */
async function writeEveryPartition(client: KafkaClient, topics: readonly string[], partitionsPerTopic: number, dead: number, produceTimeoutMs: number, deadlineMs: number): Promise<{ lastAt: number; passes: number }> {
  const pending: Pending = new Map(topics.map((t) => [t, new Set(Array.from({ length: partitionsPerTopic }, (_, p) => p))]));
  const deadline = performance.now() + deadlineMs;
  let lastAt = performance.now();
  let passes = 0;
  // What the last pass was answered, for the error when the deadline passes.
  const errors = new Map<string, number>();
  while (countPending(pending) > 0) {
    if (performance.now() > deadline) throw new Error(`node loss: ${countPending(pending)} partitions still not writable after ${deadlineMs} ms; last pass: ${[...errors].map(([e, n]) => `${e} ×${n}`).join(', ') || 'nothing sent'}`);
    errors.clear();
    passes++;
    const md = await client.metadata([...pending.keys()]).catch((e: unknown) => {
      errors.set(`Metadata: ${(e as Error).message}`, 1);
      return null;
    });
    // By leader, then by topic: the partitions still to write whose leader is alive.
    const byLeader = new Map<number, Map<string, number[]>>();
    for (const t of md?.topics ?? []) {
      const todo = t.name === null ? undefined : pending.get(t.name);
      if (todo === undefined || t.name === null) continue;
      for (const p of t.partitions) {
        if (!todo.has(p.partitionIndex) || p.leaderId < 0 || p.leaderId === dead) continue;
        let mine = byLeader.get(p.leaderId);
        if (mine === undefined) byLeader.set(p.leaderId, (mine = new Map()));
        let ps = mine.get(t.name);
        if (ps === undefined) mine.set(t.name, (ps = []));
        ps.push(p.partitionIndex);
      }
    }
    const records = buildRecordBatch({ records: [{ value: Buffer.from('x') }] });
    const sends: Promise<void>[] = [];
    for (const [leader, mine] of byLeader) {
      let topicData: { name: string; partitionData: { index: number; records: Buffer }[] }[] = [];
      let inRequest = 0;
      const flush = (): void => {
        const req: ProduceRequestInput = { transactionalId: null, acks: -1, timeoutMs: produceTimeoutMs, topicData };
        sends.push(
          client.send(Produce, req, leader).then(
            (res) => {
              const at = performance.now();
              for (const t of res.responses) {
                for (const p of t.partitionResponses) {
                  if (p.errorCode !== 0) errors.set(`error ${p.errorCode}`, (errors.get(`error ${p.errorCode}`) ?? 0) + 1);
                  if (p.errorCode !== 0 || pending.get(t.name)?.delete(p.index) !== true) continue;
                  lastAt = at;
                  if (pending.get(t.name)?.size === 0) pending.delete(t.name);
                }
              }
            },
            (e: unknown) => void errors.set(`Produce to ${leader}: ${(e as Error).message}`, (errors.get(`Produce to ${leader}: ${(e as Error).message}`) ?? 0) + 1),
          ),
        );
        topicData = [];
        inRequest = 0;
      };
      for (const [name, ps] of mine) {
        topicData.push({ name, partitionData: ps.map((index) => ({ index, records })) });
        inRequest += ps.length;
        if (inRequest >= PARTITIONS_PER_REQUEST) flush();
      }
      if (inRequest > 0) flush();
    }
    await Promise.all(sends);
    if (sends.length === 0) await sleep(PASS_PAUSE_MS);
  }
  return { lastAt, passes };
}

/** The active controller's node id, or -1 when the cluster does not say. */
async function activeController(client: KafkaClient): Promise<number> {
  try {
    const res = await client.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
    return res.topics[0]?.partitions[0]?.leaderId ?? -1;
  } catch {
    return -1;
  }
}

/**
 * One measurement on a fresh three-node cluster whose nodes 1..3 are listed in that order in
 * `c.bootstrap`; the cluster is left with one node dead, for the caller to stop.
 */
export async function measureNodeLoss(c: ClusterUnderTest, partitions: number, partitionsPerTopic: number): Promise<NodeLoss> {
  const topicCount = Math.max(1, Math.round(partitions / partitionsPerTopic));
  const topics = Array.from({ length: topicCount }, (_, i) => `loss-${String(i).padStart(4, '0')}`);
  const addresses = c.bootstrap.split(',');
  const setup = new KafkaClient({ bootstrapServers: addresses, clientId: 'bench-node-loss', requestTimeoutMs: 180_000, connectTimeoutMs: 5000 });
  let victim: number;
  let led: number;
  let controller: number;
  try {
    await createEstate(setup, topics, partitionsPerTopic, 600_000);
    controller = await activeController(setup);
    const leaders = new Map<number, number>();
    for (const t of (await setup.metadata(topics)).topics) for (const p of t.partitions) leaders.set(p.leaderId, (leaders.get(p.leaderId) ?? 0) + 1);
    const candidates = [...leaders].filter(([id]) => id !== controller && id >= 0).sort((a, b) => b[1] - a[1]);
    const top = candidates[0];
    if (top === undefined) throw new Error(`node loss: no partition leader other than the controller (${controller})`);
    [victim, led] = top;
  } finally {
    setup.close();
  }
  // Metadata from the survivors only; the connections to every leader are opened by the first writes.
  const survivors = addresses.filter((_, i) => i + 1 !== victim);
  const client = new KafkaClient({ bootstrapServers: survivors, clientId: 'bench-node-loss', requestTimeoutMs: 30_000, connectTimeoutMs: 2000 });
  try {
    // Before the kill, a write may take as long as the estate needs: it only shows every partition writable.
    await writeEveryPartition(client, topics, partitionsPerTopic, -1, 30_000, 600_000);
    const killedAt = performance.now();
    await c.kill(victim);
    const { lastAt, passes } = await writeEveryPartition(client, topics, partitionsPerTopic, victim, PRODUCE_TIMEOUT_MS, 600_000);
    return { ms: lastAt - killedAt, killed: victim, controller, led, passes };
  } finally {
    client.close();
  }
}
