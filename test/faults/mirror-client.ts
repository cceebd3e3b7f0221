/**
 * The client side of the mirror fault case, run inside a netns cluster's client namespace
 * (`node bench/run.mjs test/faults/mirror-client.ts <mode> <json options>`), printing one JSON
 * line per answer on stdout:
 *
 * - `source`: creates the topic on the source node, then until SIGTERM produces to it with an
 *   idempotent KafkaJS producer (acks=all, every partition in turn), printing `{"acked": n}`
 *   every 100 acknowledged records;
 * - `leaders`: the leader of every partition of the topic, as Metadata from `bootstrap` names it;
 * - `write`: one acks=all record to every partition of the topic, each retried until it is
 *   acknowledged or `deadlineMs` passes: `{"partition": p, "offset": o}` or `{"partition": p, "error": e}`.
 */
import { Kafka, logLevel } from 'kafkajs';

interface Options {
  readonly bootstrap: string;
  readonly topic: string;
  readonly partitions: number;
  readonly deadlineMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const print = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);

async function main(): Promise<void> {
  const mode = process.argv[2];
  const opts = JSON.parse(process.argv[3] ?? '{}') as Options;
  const kafka = new Kafka({
    clientId: `faults-mirror-${mode}`,
    brokers: opts.bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    requestTimeout: 5000,
    connectionTimeout: 1000,
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 },
  });
  if (mode === 'source') {
    let stopping = false;
    process.on('SIGTERM', () => {
      stopping = true;
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: opts.topic, numPartitions: opts.partitions, replicationFactor: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    let acked = 0;
    for (let i = 0; !stopping; i++) {
      const partition = i % opts.partitions;
      await producer.send({ topic: opts.topic, acks: -1, messages: [{ value: `src-${i}-a`, partition }, { value: `src-${i}-b`, partition }] });
      acked += 2;
      if (acked % 100 === 0) print({ acked });
      await sleep(5);
    }
    await producer.disconnect();
    print({ acked, done: true });
    return;
  }
  if (mode === 'leaders') {
    const admin = kafka.admin();
    await admin.connect();
    const md = await admin.fetchTopicMetadata({ topics: [opts.topic] });
    for (const p of md.topics[0]?.partitions ?? []) print({ partition: p.partitionId, leader: p.leader });
    await admin.disconnect();
    return;
  }
  if (mode === 'write') {
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const deadline = Date.now() + (opts.deadlineMs ?? 60_000);
    for (let partition = 0; partition < opts.partitions; partition++) {
      for (;;) {
        try {
          const res = await producer.send({ topic: opts.topic, acks: -1, messages: [{ value: `after-stop-${partition}`, partition }] });
          print({ partition, offset: Number(res[0]?.baseOffset ?? -1) });
          break;
        } catch (err) {
          if (Date.now() > deadline) {
            print({ partition, error: String(err) });
            break;
          }
          await sleep(200);
        }
      }
    }
    await producer.disconnect();
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
