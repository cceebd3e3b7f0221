/**
 * One metadata write is one etcd transaction, and etcd refuses a transaction of more operations
 * than its --max-txn-ops (128 unless set). A topic of 200 partitions is 201 records: on etcd's
 * default it used to be retried until REQUEST_TIMED_OUT; it is now refused at once with
 * POLICY_VIOLATION naming the setting, and with etcd run as docs/cluster.md asks
 * (--max-txn-ops 10240) it is created, every partition with a leader.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { WireClient } from '../broker/wire.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

let cluster: RunningCluster | null = null;
afterEach(async () => {
  await cluster?.destroy();
  cluster = null;
});

async function create(port: number, name: string, numPartitions: number) {
  const c = await WireClient.connect(port);
  try {
    const started = Date.now();
    const r = decodeCreateTopicsResponse(
      await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7), 60_000),
      7,
    );
    return { errorCode: r.topics[0]!.errorCode, errorMessage: r.topics[0]!.errorMessage ?? '', tookMs: Date.now() - started };
  } finally {
    c.close();
  }
}

it('on etcd with its default --max-txn-ops a 200-partition topic is refused at once with POLICY_VIOLATION naming the setting', async () => {
  cluster = await startCluster({ nodes: 3, etcd: { maxTxnOps: null }, overrides: { 'broker.session.timeout.ms': 9000, 'broker.heartbeat.interval.ms': 2000 } });
  const r = await create(cluster.nodes[0]!.port, 'wide', 200);
  expect(r.errorCode).toBe(ErrorCode.POLICY_VIOLATION);
  expect(r.errorMessage).toContain('--max-txn-ops');
  expect(r.tookMs).toBeLessThan(20_000);
  expect((await create(cluster.nodes[0]!.port, 'narrow', 100)).errorCode).toBe(ErrorCode.NONE);
}, 180_000);

it('on etcd run with --max-txn-ops 10240 a 200-partition topic is created, every partition led', async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'broker.session.timeout.ms': 9000, 'broker.heartbeat.interval.ms': 2000 } });
  expect((await create(cluster.nodes[0]!.port, 'wide', 200)).errorCode).toBe(ErrorCode.NONE);
  const admin = new Kafka({ clientId: 'wide', brokers: cluster.bootstrap, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const md = await eventually('every partition of wide led', async () => {
      const m = await admin.fetchTopicMetadata({ topics: ['wide'] });
      const parts = m.topics[0]?.partitions ?? [];
      return parts.length === 200 && parts.every((p) => p.leader >= 0) ? parts : null;
    }, 60_000);
    expect(md).toHaveLength(200);
  } finally {
    await admin.disconnect();
  }
}, 180_000);
