/**
 * The Kafka 4.4 versions Fjord serves, over raw requests, against Apache Kafka 4.4.0 and against
 * Fjord: ApiVersions v5 (KIP-1242: the cluster and node the client names), ListOffsets v11
 * (KIP-1023: earliest pending upload), DescribeLogDirs v5 (IsCordoned) and DeleteGroups v3
 * (ErrorMessage), OffsetCommit/OffsetFetch v10 (test/broker/offsets-v10-wire.ts) and transactions V2
 * (test/broker/txn-v2-wire.ts). Kafka's answers are the expected ones; Fjord's must equal them.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeApiVersionsRequest, type ApiVersionsRequestInput } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { encodeDescribeLogDirsRequest } from '../../src/protocol/generated/messages/describe-log-dirs-request.js';
import { decodeDescribeLogDirsResponse } from '../../src/protocol/generated/messages/describe-log-dirs-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeOffsetCommitRequest } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { checkOffsetsV10, runOffsetsV10 } from '../broker/offsets-v10-wire.js';
import { checkTxnV2, runTxnV2 } from '../broker/txn-v2-wire.js';
import { WireClient } from '../broker/wire.js';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker.js';
import { checkTxnVerification, runTxnVerification } from './txn-verification-wire.js';
import { KAFKA_NEWEST_VERSION } from './lib/paths.js';
import { differentialTests, useFjordNode, type Scenario } from './lib/scenario.js';
import type { Target } from './lib/target.js';
import { lastAnswer } from '../helpers/wait.js';

type Obs = Record<string, unknown>;

let kafka: KafkaBroker | undefined;
beforeAll(async () => {
  kafka = await startKafkaBroker({ version: KAFKA_NEWEST_VERSION });
}, 180_000);
afterAll(async () => {
  await kafka?.stop();
});
const kafka44 = (): Target => {
  if (kafka === undefined) throw new Error(`Apache Kafka ${KAFKA_NEWEST_VERSION} did not start`);
  return kafka;
};
const fjord = useFjordNode();

/** Opens a raw connection to the target, runs `body` on it, closes it. */
function raw<O>(id: string, body: (c: WireClient, topic: string) => Promise<O>, check: (o: O) => void, timeoutMs = 60_000): Scenario<O> {
  return {
    id: `raw/kafka-4.4-${id}`,
    async run(target, topic) {
      const c = await WireClient.connect(target.port);
      try {
        return await body(c, topic);
      } finally {
        c.close();
      }
    },
    check,
    timeoutMs,
  };
}

async function createTopic(c: WireClient, name: string): Promise<void> {
  const ct = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 10_000 }, 7)), 7);
  expect(ct.topics[0]!.errorCode).toBe(0);
}

const SCENARIOS: Scenario<Obs>[] = [
  raw(
    'api-versions-v5',
    async (c) => {
      const md = decodeMetadataResponse(await c.call(3, 12, (w) => encodeMetadataRequest(w, { topics: [], allowAutoTopicCreation: false }, 12)), 12);
      const clusterId = md.clusterId!;
      const nodeId = md.brokers[0]!.nodeId;
      const ask = async (req: ApiVersionsRequestInput, name = 'wire-test') => {
        const r = await c.call(18, 5, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: name, clientSoftwareVersion: '1.0', ...req }, 5));
        const res = decodeApiVersionsResponse(r, 5);
        return { errorCode: res.errorCode, apiKeys: res.apiKeys.length };
      };
      const plain = decodeApiVersionsResponse(await c.call(18, 5, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1.0' }, 5)), 5);
      const max = Object.fromEntries(plain.apiKeys.filter((k) => [2, 18, 35, 42].includes(k.apiKey)).map((k) => [k.apiKey, k.maxVersion]));
      const self = await ask({ clusterId, nodeId });
      return {
        max,
        selfOk: self.errorCode === 0 && self.apiKeys > 0,
        otherCluster: await ask({ clusterId: 'AAAAAAAAAAAAAAAAAAAAAA', nodeId }),
        otherNode: await ask({ clusterId, nodeId: nodeId + 7 }),
        onlyClusterId: await ask({ clusterId }),
        onlyNodeId: await ask({ nodeId }),
        // Validity is checked before the ids: a bad software name wins over a wrong cluster.
        badNameOtherCluster: await ask({ clusterId: 'AAAAAAAAAAAAAAAAAAAAAA', nodeId }, '-bad-'),
        afterwards: (await ask({})).errorCode,
      };
    },
    (o) => {
      expect(o.max).toEqual({ 2: 11, 18: 5, 35: 5, 42: 3 });
      expect(o.selfOk).toBe(true);
      expect(o.otherCluster).toEqual({ errorCode: ErrorCode.REBOOTSTRAP_REQUIRED, apiKeys: 0 });
      expect(o.otherNode).toEqual({ errorCode: ErrorCode.REBOOTSTRAP_REQUIRED, apiKeys: 0 });
      expect(o.onlyClusterId).toEqual({ errorCode: ErrorCode.INVALID_REQUEST, apiKeys: 0 });
      expect(o.onlyNodeId).toEqual({ errorCode: ErrorCode.INVALID_REQUEST, apiKeys: 0 });
      expect(o.badNameOtherCluster).toEqual({ errorCode: ErrorCode.INVALID_REQUEST, apiKeys: 0 });
      expect(o.afterwards).toBe(0);
    },
  ),
  raw(
    'list-offsets-v11',
    async (c, topic) => {
      await createTopic(c, topic);
      const records = [0, 1, 2].map((i) => ({ value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + [5, 9, 7][i]! }));
      // Right after CreateTopics a broker can still answer NOT_LEADER_OR_FOLLOWER or
      // UNKNOWN_TOPIC_OR_PARTITION while the partition's leadership settles; nothing was written then.
      const pr = await lastAnswer(
        async () =>
          decodeProduceResponse(
            await c.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records: buildRecordBatch({ records }) }] }] }, 11)),
            11,
          ),
        (r) => !([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] as number[]).includes(r.responses[0]!.partitionResponses[0]!.errorCode),
      );
      expect(pr.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      const ask = async (v: number, timestamp: number) => {
        const r = await c.call(2, v, (w) =>
          encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, timeoutMs: 10_000, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp) }] }] }, v),
        );
        const p = decodeListOffsetsResponse(r, v).topics[0]!.partitions[0]!;
        return [p.errorCode, Number(p.offset), Number(p.timestamp), p.leaderEpoch];
      };
      const out: Obs = {};
      for (const ts of [-6, -5, -4, -3, -2, -1, -7, 1_700_000_000_008]) out[`v11 ${ts}`] = await ask(11, ts);
      // Each special timestamp needs the version that introduced it.
      for (const [v, ts] of [[10, -6], [8, -5], [7, -4], [6, -3], [1, -2]] as const) out[`v${v} ${ts}`] = await ask(v, ts);
      return out;
    },
    (o) => {
      expect(o['v11 -6']).toEqual([0, -1, -1, -1]);
      for (const k of ['v11 -7', 'v10 -6', 'v8 -5', 'v7 -4', 'v6 -3']) expect((o[k] as number[])[0], k).toBe(ErrorCode.UNSUPPORTED_VERSION);
      expect((o['v1 -2'] as number[])[0]).toBe(0);
      expect(o['v11 -2']).toEqual([0, 0, -1, 0]);
      expect(o['v11 -1']).toEqual([0, 3, -1, 0]);
      expect(o['v11 -3']).toEqual([0, 1, 1_700_000_000_009, 0]);
    },
  ),
  raw(
    'describe-log-dirs-v5',
    async (c, topic) => {
      await createTopic(c, topic);
      const res = await lastAnswer(
        async () => decodeDescribeLogDirsResponse(await c.call(35, 5, (w) => encodeDescribeLogDirsRequest(w, { topics: [{ topic, partitions: [0] }] }, 5)), 5),
        (r) => r.results.some((d) => d.topics.length > 0),
      );
      return {
        errorCode: res.errorCode,
        results: res.results.map((d) => ({
          errorCode: d.errorCode,
          isCordoned: d.isCordoned,
          hasSizes: d.totalBytes > 0n && d.usableBytes > 0n,
          topics: d.topics.map((t) => ({ name: t.name === topic, partitions: t.partitions.map((p) => [p.partitionIndex, p.isFutureKey]) })),
        })),
      };
    },
    (o) => {
      expect(o).toEqual({ errorCode: 0, results: [{ errorCode: 0, isCordoned: false, hasSizes: true, topics: [{ name: true, partitions: [[0, false]] }] }] });
    },
  ),
  raw(
    'delete-groups-v3',
    async (c, topic) => {
      await createTopic(c, topic);
      const group = `${topic}-group`;
      const COORDINATOR_NOT_READY: readonly number[] = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR];
      // FindCoordinator first: Kafka creates __consumer_offsets on the first lookup, and answers
      // NOT_COORDINATOR to commits until then.
      const oc = await lastAnswer(
        async () => {
          await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 0, coordinatorKeys: [group] }, 4));
          return decodeOffsetCommitResponse(
            await c.call(8, 8, (w) =>
              encodeOffsetCommitRequest(w, { groupId: group, generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: null }] }] }, 8),
            ),
            8,
          );
        },
        (r) => !COORDINATOR_NOT_READY.includes(r.topics[0]!.partitions[0]!.errorCode),
      );
      expect(oc.topics[0]!.partitions[0]!.errorCode).toBe(0);
      const res = decodeDeleteGroupsResponse(await c.call(42, 3, (w) => encodeDeleteGroupsRequest(w, { groupsNames: [group, `${group}-missing`] }, 3)), 3);
      // Kafka answers the groups in no fixed order: the existing group first, then the missing one.
      const results = res.results.map((g) => [g.groupId === group, g.errorCode, g.errorMessage] as const);
      return { results: results.slice().sort((a, b) => Number(b[0]) - Number(a[0])) };
    },
    (o) => {
      expect(o.results).toEqual([
        [true, ErrorCode.NONE, null],
        [false, ErrorCode.GROUP_ID_NOT_FOUND, null],
      ]);
    },
  ),
];

describe(`Kafka ${KAFKA_NEWEST_VERSION} protocol versions (raw protocol)`, () => {
  for (const s of SCENARIOS) differentialTests(s, kafka44, fjord);
  differentialTests(raw('offsets-v10', runOffsetsV10, checkOffsetsV10, 90_000), kafka44, fjord);
  differentialTests(raw('transactions-v2', runTxnV2, checkTxnV2, 120_000), kafka44, fjord);
  differentialTests(raw('txn-verification', runTxnVerification, checkTxnVerification, 90_000), kafka44, fjord);
});
