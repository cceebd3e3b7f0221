/**
 * Client quotas against a real node process, with real clients: quotas set with
 * AlterClientQuotas (@platformatic/kafka's admin) apply at once, kafkajs producers and admin
 * calls report the throttle_time_ms the node answers (read from kafkajs's own debug log of each
 * response, where KIP-219 versions carry it as clientSideThrottleTime), and the controller mutation quota refuses a CreateTopics v7 with
 * THROTTLING_QUOTA_EXCEEDED.
 *
 * The node runs 3 windows of 1 s (quota.window.num=3) so a producer's first burst is about 2 s of
 * quota, not Kafka's default 10 s: the measured rate over a few seconds is then near the quota.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import { Admin, ResponseError, type AlterClientQuotasOptions } from '@platformatic/kafka';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let node: RunningNode;
let admin: Admin;

/** Every response kafkajs logs for `apiName`, with the throttleTime it decoded. */
interface Seen {
  readonly apiName: string;
  readonly throttleTime: number;
}

function kafkajsClient(clientId: string, seen: Seen[]): Kafka {
  return new Kafka({
    clientId,
    brokers: [node.bootstrap],
    logLevel: logLevel.DEBUG,
    retry: { retries: 2 },
    logCreator:
      () =>
      ({ log }: LogEntry): void => {
        const m = /^Response (\w+)\(/.exec(log.message);
        const data = (log as { data?: { throttleTime?: number; clientSideThrottleTime?: number } }).data;
        if (!m || typeof data !== 'object' || data === null) return;
        // KIP-219 versions: kafkajs reports the broker's throttle_time_ms as clientSideThrottleTime.
        const throttleTime = data.clientSideThrottleTime ?? data.throttleTime;
        if (typeof throttleTime === 'number') seen.push({ apiName: m[1]!, throttleTime });
      },
  });
}

async function setClientQuota(clientId: string, key: 'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage' | 'controller_mutation_rate', value: number): Promise<void> {
  // @platformatic/kafka types the keys it knows; controller_mutation_rate is sent as given.
  const op = { key, value, remove: false } as unknown as AlterClientQuotasOptions['entries'][number]['ops'][number];
  const res: { errorCode: number }[] = await admin.alterClientQuotas({ entries: [{ entities: [{ entityType: 'client-id', entityName: clientId }], ops: [op] }] });
  expect(res.map((r) => r.errorCode)).toEqual([0]);
}

beforeAll(async () => {
  node = await startNode({ overrides: { 'quota.window.num': 3, 'quota.window.size.seconds': 1, 'controller.quota.window.num': 2 } });
  admin = new Admin({ clientId: 'quota-admin', bootstrapBrokers: [node.bootstrap], retries: 0, connectTimeout: 5000 });
  await admin.createTopics({ topics: ['quota-produce'], partitions: 1, replicas: 1 });
}, 300_000);

afterAll(async () => {
  await admin?.close();
  await node?.destroy();
});

const MB = 1024 * 1024;
const value = Buffer.alloc(16 * 1024, 7);

/** Produces 256 KiB requests for `ms`; the acknowledged bytes per second. */
async function produceFor(kafka: Kafka, ms: number): Promise<number> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const messages = Array.from({ length: 16 }, () => ({ value }));
  let bytes = 0;
  const started = Date.now();
  while (Date.now() - started < ms) {
    await producer.send({ topic: 'quota-produce', acks: 1, messages });
    bytes += messages.length * value.length;
  }
  const rate = bytes / ((Date.now() - started) / 1000);
  await producer.disconnect();
  return rate;
}

describe('client quotas', () => {
  it('holds a producer with producer_byte_rate=1MB near 1 MB/s and reports throttle times, while another client id is not throttled', async () => {
    await setClientQuota('throttled-producer', 'producer_byte_rate', MB);
    const throttledSeen: Seen[] = [];
    const freeSeen: Seen[] = [];
    const [throttledRate] = await Promise.all([
      produceFor(kafkajsClient('throttled-producer', throttledSeen), 6000),
      produceFor(kafkajsClient('free-producer', freeSeen), 3000),
    ]);
    // A tolerant band: the first burst and the last request's throttle make it deviate a little.
    expect(throttledRate).toBeGreaterThan(0.5 * MB);
    expect(throttledRate).toBeLessThan(1.6 * MB);
    const throttledProduces = throttledSeen.filter((s) => s.apiName === 'Produce');
    expect(throttledProduces.some((s) => s.throttleTime > 0)).toBe(true);
    const freeProduces = freeSeen.filter((s) => s.apiName === 'Produce');
    expect(freeProduces.length).toBeGreaterThan(0);
    expect(freeProduces.every((s) => s.throttleTime === 0)).toBe(true);
  }, 60_000);

  it('holds a consumer with consumer_byte_rate=1MB near 1 MB/s and reports throttle times', async () => {
    await admin.createTopics({ topics: ['quota-fetch'], partitions: 1, replicas: 1 });
    const loader = kafkajsClient('fetch-loader', []).producer({ allowAutoTopicCreation: false });
    await loader.connect();
    const messages = Array.from({ length: 16 }, () => ({ value }));
    for (let i = 0; i < 40; i++) await loader.send({ topic: 'quota-fetch', acks: 1, messages });
    await loader.disconnect();
    await setClientQuota('throttled-consumer', 'consumer_byte_rate', MB);
    // kafkajs logs a Fetch response's fields only with its protocol debugging switched on.
    const env = { a: process.env['KAFKAJS_DEBUG_PROTOCOL_BUFFERS'], b: process.env['KAFKAJS_DEBUG_EXTENDED_PROTOCOL_BUFFERS'] };
    process.env['KAFKAJS_DEBUG_PROTOCOL_BUFFERS'] = '1';
    process.env['KAFKAJS_DEBUG_EXTENDED_PROTOCOL_BUFFERS'] = '1';
    const seen: Seen[] = [];
    const consumer = kafkajsClient('throttled-consumer', seen).consumer({ groupId: 'quota-fetch-group', maxBytes: 8 * MB, maxBytesPerPartition: 8 * MB });
    let bytes = 0;
    let started = 0;
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: 'quota-fetch', fromBeginning: true });
      await consumer.run({
        eachBatch: async ({ batch }) => {
          if (started === 0) started = Date.now();
          for (const m of batch.messages) bytes += m.value?.length ?? 0;
        },
      });
      await waitFor('the first fetched batch', () => started !== 0, 30_000);
      // The rate is measured over a window of fixed length: its length is the thing, not an event.
      await new Promise((r) => setTimeout(r, 5000 - (Date.now() - started)));
    } finally {
      await consumer.disconnect();
      if (env.a === undefined) delete process.env['KAFKAJS_DEBUG_PROTOCOL_BUFFERS'];
      else process.env['KAFKAJS_DEBUG_PROTOCOL_BUFFERS'] = env.a;
      if (env.b === undefined) delete process.env['KAFKAJS_DEBUG_EXTENDED_PROTOCOL_BUFFERS'];
      else process.env['KAFKAJS_DEBUG_EXTENDED_PROTOCOL_BUFFERS'] = env.b;
    }
    const rate = bytes / ((Date.now() - started) / 1000);
    // 10 MiB were written: an unthrottled consumer reads them all at once, this one is held back.
    expect(bytes).toBeLessThan(10 * MB);
    expect(rate).toBeGreaterThan(0.4 * MB);
    expect(rate).toBeLessThan(1.8 * MB);
    expect(seen.some((s) => s.apiName === 'Fetch' && s.throttleTime > 0)).toBe(true);
  }, 90_000);

  it('throttles a client over request_percentage, set without a restart', async () => {
    await setClientQuota('busy-admin', 'request_percentage', 0.01);
    const seen: Seen[] = [];
    const kafkaAdmin = kafkajsClient('busy-admin', seen).admin();
    await kafkaAdmin.connect();
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !seen.some((s) => s.apiName === 'Metadata' && s.throttleTime > 0)) {
      await kafkaAdmin.fetchTopicMetadata({ topics: ['quota-produce'] });
    }
    await kafkaAdmin.disconnect();
    const throttled = seen.filter((s) => s.apiName === 'Metadata' && s.throttleTime > 0);
    expect(throttled.length).toBeGreaterThan(0);
    // Kafka caps the request quota's throttle at one window (quota.window.size.seconds).
    expect(throttled.every((s) => s.throttleTime <= 1000)).toBe(true);
  }, 60_000);

  it('refuses CreateTopics v7 over controller_mutation_rate with THROTTLING_QUOTA_EXCEEDED', async () => {
    await setClientQuota('mutator', 'controller_mutation_rate', 1);
    const mutator = new Admin({ clientId: 'mutator', bootstrapBrokers: [node.bootstrap], retries: 0, connectTimeout: 5000 });
    try {
      // The bucket holds rate * windows * window = 2 partitions; a larger request is still admitted.
      const first = await mutator.createTopics({ topics: ['mutation-a'], partitions: 6, replicas: 1 });
      expect(first[0]).toMatchObject({ name: 'mutation-a', partitions: 6 });
      let caught: unknown = null;
      try {
        await mutator.createTopics({ topics: ['mutation-b'], partitions: 1, replicas: 1 });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ResponseError);
      const response = (caught as ResponseError).response as { throttleTimeMs: number; topics: { name: string; errorCode: number }[] };
      expect(response.topics).toEqual([expect.objectContaining({ name: 'mutation-b', errorCode: 89 })]);
      // The debt of 4 partitions at 1 partition/s.
      expect(response.throttleTimeMs).toBeGreaterThan(2000);
      expect(response.throttleTimeMs).toBeLessThanOrEqual(4000);
      const md = await admin.metadata({ topics: ['mutation-a'] });
      expect(md.topics.has('mutation-b')).toBe(false);
    } finally {
      await mutator.close();
    }
  }, 60_000);
});
