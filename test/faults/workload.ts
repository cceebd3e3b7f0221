/**
 * The client side of a fault test, run inside the cluster's client namespace
 * (`node bench/run.mjs test/faults/workload.ts <json options>`): it creates the topic, then until
 * SIGTERM
 *
 * - asks every node for Metadata of the topic, each on its own connection, every 100 ms;
 * - produces with acks=all to the leader the newest answer names (producer `all`);
 * - optionally produces with acks=1 straight to one chosen node, whatever leader it is told of
 *   (producer `one`): what a client holding a stale leader does;
 * - produces with a real client's idempotent producer (KafkaJS, acks=all, its own retries:
 *   producer `idem`), whose retries must never leave a record twice;
 * - consumes the topic in a consumer group (KafkaJS, read_committed, committing offsets),
 *   recording each record read with the group generation it was read in, and each offset commit;
 * - writes transactions (KafkaJS transactional producer), two records each, committing most and
 *   aborting every fourth, recording each with its values and how it ended;
 *
 * and writes every operation as one JSON line to the history file: its kind, the node asked,
 * when it was sent and answered (monotonic ms of this process), and the outcome. The checker
 * (history-checker.ts) reads it with the nodes' logs from disk.
 */
import { createWriteStream } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { encodeProduceRequest, type ProduceRequestInput } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse, type ProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';

export interface WorkloadOptions {
  readonly nodes: Record<string, string>;
  readonly topic: string;
  readonly partitions: number;
  readonly history: string;
  /** Node that producer `one` sends its acks=1 writes to; absent: no such producer. */
  readonly acksOneTo?: number;
  /** Adds the idempotent KafkaJS producer (default true). */
  readonly idempotent?: boolean;
  /** Adds the KafkaJS consumer group (default true). */
  readonly group?: boolean;
  /** Adds the transactional producer (default true). */
  readonly transactions?: boolean;
}

export type HistoryOp =
  | { readonly kind: 'md'; readonly node: number; readonly sent: number; readonly done: number; readonly partition: number; readonly leader: number; readonly epoch: number; readonly error: number }
  | { readonly kind: 'produce'; readonly producer: string; readonly node: number; readonly sent: number; readonly done: number; readonly partition: number; readonly value: string; readonly acks: number; readonly error: number; readonly offset: number }
  | { readonly kind: 'consume'; readonly generation: number; readonly partition: number; readonly offset: number; readonly value: string }
  | { readonly kind: 'commit'; readonly generation: number; readonly partition: number; readonly offset: number }
  | {
      readonly kind: 'txn';
      readonly values: readonly string[];
      readonly outcome: 'committed' | 'aborted' | 'unknown';
      readonly sent?: number;
      readonly done?: number;
      /** Where the producer was told each value went (in the order of `values`), when the send was answered. */
      readonly offsets?: readonly { readonly partition: number; readonly offset: number }[];
    }
  | { readonly kind: 'info'; readonly msg: string };

const ZERO = '00000000-0000-0000-0000-000000000000';
const Produce: ApiSpec<ProduceRequestInput, ProduceResponse> = { apiKey: 0, versions: [9, 11], encode: encodeProduceRequest, decode: decodeProduceResponse };

const now = (): number => performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}') as WorkloadOptions;
  const out = createWriteStream(opts.history, { flags: 'a' });
  const record = (op: HistoryOp): void => void out.write(`${JSON.stringify(op)}\n`);
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
  });
  const ids = Object.keys(opts.nodes).map(Number);
  const clients = new Map<number, KafkaClient>();
  const clientOf = (id: number): KafkaClient => {
    let c = clients.get(id);
    if (c === undefined) {
      c = new KafkaClient({ bootstrapServers: [opts.nodes[String(id)]!], clientId: `faults-${id}`, requestTimeoutMs: 2000, connectTimeoutMs: 1000 });
      clients.set(id, c);
    }
    return c;
  };
  const drop = (id: number): void => {
    clients.get(id)?.close();
    clients.delete(id);
  };

  // The topic: three replicas, acks=all needs two in sync.
  for (;;) {
    try {
      const res = await clientOf(ids[0]!).send(Apis.CreateTopics, {
        topics: [{ name: opts.topic, numPartitions: opts.partitions, replicationFactor: Math.min(3, ids.length), assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] }],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      const code = res.topics[0]?.errorCode ?? -1;
      if (code === 0 || code === 36) break;
      record({ kind: 'info', msg: `CreateTopics error ${code}` });
    } catch (err) {
      record({ kind: 'info', msg: `CreateTopics failed: ${String(err)}` });
      drop(ids[0]!);
    }
    await sleep(200);
  }

  /** Newest leader per partition, by leader epoch, from any node's answer. */
  const leaders = new Map<number, { leader: number; epoch: number }>();
  const metadataLoop = async (id: number): Promise<void> => {
    while (!stopping) {
      const sent = now();
      try {
        const res = await clientOf(id).send(Apis.Metadata, { topics: [{ name: opts.topic, topicId: ZERO }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
        const done = now();
        for (const p of res.topics[0]?.partitions ?? []) {
          record({ kind: 'md', node: id, sent, done, partition: p.partitionIndex, leader: p.leaderId, epoch: p.leaderEpoch, error: p.errorCode });
          const cur = leaders.get(p.partitionIndex);
          if (p.leaderId >= 0 && (cur === undefined || p.leaderEpoch > cur.epoch)) leaders.set(p.partitionIndex, { leader: p.leaderId, epoch: p.leaderEpoch });
        }
      } catch {
        drop(id);
      }
      await sleep(100);
    }
  };

  let seq = 0;
  const produce = async (producer: string, id: number, partition: number, acks: number): Promise<void> => {
    const value = `${producer}-${seq++}`;
    const sent = now();
    let error = -1;
    let offset = -1;
    try {
      const res = await clientOf(id).send(
        Produce,
        { transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: opts.topic, partitionData: [{ index: partition, records: buildRecordBatch({ records: [{ value: Buffer.from(value) }] }) }] }] },
        null,
      );
      const pr = res.responses[0]?.partitionResponses[0];
      error = pr?.errorCode ?? -1;
      offset = error === 0 ? Number(pr!.baseOffset) : -1;
    } catch {
      drop(id);
    }
    record({ kind: 'produce', producer, node: id, sent, done: now(), partition, value, acks, error, offset });
  };

  const acksAllLoop = async (): Promise<void> => {
    let i = 0;
    while (!stopping) {
      const partition = i++ % opts.partitions;
      const l = leaders.get(partition);
      if (l === undefined) {
        await sleep(50);
        continue;
      }
      await produce('all', l.leader, partition, -1);
      await sleep(10);
    }
  };

  const acksOneLoop = async (target: number): Promise<void> => {
    let i = 0;
    while (!stopping) {
      await produce('one', target, i++ % opts.partitions, 1);
      await sleep(10);
    }
  };

  const idempotentLoop = async (): Promise<void> => {
    const kafka = new Kafka({ clientId: 'faults-idem', brokers: Object.values(opts.nodes), logLevel: logLevel.NOTHING, requestTimeout: 5000, connectionTimeout: 1000, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } });
    const open = async (): Promise<ReturnType<typeof kafka.producer>> => {
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      while (!stopping) {
        try {
          await p.connect();
          break;
        } catch {
          await sleep(200);
        }
      }
      return p;
    };
    let producer = await open();
    let i = 0;
    while (!stopping) {
      const partition = i++ % opts.partitions;
      const value = `idem-${seq++}`;
      const sent = now();
      let error = -1;
      let offset = -1;
      try {
        const res = await producer.send({ topic: opts.topic, acks: -1, timeout: 5000, messages: [{ value, partition }] });
        error = res[0]?.errorCode ?? -1;
        offset = error === 0 ? Number(res[0]!.baseOffset) : -1;
      } catch {
        // Not acknowledged: its outcome is unknown, which the checker allows. KafkaJS would send
        // the next record with the same sequence number, which a broker rightly takes for a
        // retry of this one (answering with its offset, writing nothing): a new producer id
        // instead, as the Java producer bumps its epoch after such a batch.
        await producer.disconnect().catch(() => undefined);
        producer = await open();
      }
      record({ kind: 'produce', producer: 'idem', node: -1, sent, done: now(), partition, value, acks: -1, error, offset });
      await sleep(10);
    }
    await producer.disconnect().catch(() => undefined);
  };

  const groupLoop = async (): Promise<void> => {
    const kafka = new Kafka({ clientId: 'faults-group', brokers: Object.values(opts.nodes), logLevel: logLevel.NOTHING, requestTimeout: 5000, connectionTimeout: 1000, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
    const consumer = kafka.consumer({ groupId: 'faults-group', sessionTimeout: 10_000, heartbeatInterval: 1000, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
    // KafkaJS names no generation id on joining: each join this member makes counts as one.
    let generation = 0;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      generation++;
    });
    consumer.on(consumer.events.COMMIT_OFFSETS, (e) => {
      const p = e.payload as unknown as { topics: { topic: string; partitions: { partition: string | number; offset: string }[] }[] };
      for (const t of p.topics) for (const q of t.partitions) record({ kind: 'commit', generation, partition: Number(q.partition), offset: Number(q.offset) });
    });
    while (!stopping) {
      try {
        await consumer.connect();
        await consumer.subscribe({ topic: opts.topic, fromBeginning: true });
        await consumer.run({
          autoCommitInterval: 500,
          eachMessage: async ({ partition, message }) => {
            record({ kind: 'consume', generation, partition, offset: Number(message.offset), value: message.value?.toString() ?? '' });
          },
        });
        break;
      } catch {
        await consumer.disconnect().catch(() => undefined);
        await sleep(500);
      }
    }
    while (!stopping) await sleep(100);
    await consumer.disconnect().catch(() => undefined);
  };

  const transactionLoop = async (): Promise<void> => {
    const kafka = new Kafka({ clientId: 'faults-txn', brokers: Object.values(opts.nodes), logLevel: logLevel.NOTHING, requestTimeout: 5000, connectionTimeout: 1000, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } });
    let producer = kafka.producer({ transactionalId: 'faults-txn', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    let connected = false;
    let n = 0;
    while (!stopping) {
      if (!connected) {
        try {
          await producer.connect();
          connected = true;
        } catch {
          await sleep(500);
          continue;
        }
      }
      const k = n++;
      const values = [`txn-${k}-a`, `txn-${k}-b`];
      const abort = k % 4 === 3;
      let outcome: 'committed' | 'aborted' | 'unknown' = 'unknown';
      let offsets: { partition: number; offset: number }[] | undefined;
      const sent = now();
      try {
        const txn = await producer.transaction();
        try {
          // One send per partition: KafkaJS 2.2.4 keeps, across the retries of one send, the
          // answers of the brokers that answered first; a partition whose leader moved to one of
          // them on a retry is never sent, and the send resolves without it (its sequence number
          // rolled back, its record nowhere, the transaction then committed without it).
          offsets = [];
          for (const [i, value] of values.entries()) {
            const partition = (k + i) % opts.partitions;
            const meta = await txn.send({ topic: opts.topic, acks: -1, messages: [{ value, partition }] });
            const m = meta.find((x) => x.partition === partition);
            if (m === undefined || m.errorCode !== 0) throw new Error(`send of ${value} to partition ${partition} answered without it`);
            offsets.push({ partition, offset: Number(m.baseOffset ?? -1) });
          }
          if (abort) {
            await txn.abort();
            outcome = 'aborted';
          } else {
            await txn.commit();
            outcome = 'committed';
          }
        } catch (err) {
          // The transaction's end is unknown; abort what can be and start over on a new producer.
          await txn.abort().catch(() => undefined);
          throw err;
        }
      } catch {
        await producer.disconnect().catch(() => undefined);
        producer = kafka.producer({ transactionalId: 'faults-txn', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
        connected = false;
      }
      record({ kind: 'txn', values, outcome, sent, done: now(), ...(offsets !== undefined ? { offsets } : {}) });
      await sleep(20);
    }
    await producer.disconnect().catch(() => undefined);
  };

  record({ kind: 'info', msg: 'workload started' });
  await Promise.all([
    ...ids.map((id) => metadataLoop(id)),
    acksAllLoop(),
    ...(opts.acksOneTo !== undefined ? [acksOneLoop(opts.acksOneTo)] : []),
    ...(opts.idempotent !== false ? [idempotentLoop()] : []),
    ...(opts.group !== false ? [groupLoop()] : []),
    ...(opts.transactions !== false ? [transactionLoop()] : []),
  ]);
  for (const c of clients.values()) c.close();
  await new Promise<void>((r) => out.end(r));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
