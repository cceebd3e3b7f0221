/**
 * AlterShareGroupOffsets on a fenced node (one `fjord start` process on one etcd): with etcd
 * stopped the node cannot renew its lease and fences itself, while its metadata image still
 * names it the leader of the partition. Share-partition state lives on the unfenced leader, as
 * share fetches are served there, so the partition is NOT_LEADER_OR_FOLLOWER and nothing is
 * written (the group's membership, already held, needs no write).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAlterShareGroupOffsetsRequest } from '../../src/protocol/generated/messages/alter-share-group-offsets-request.js';
import { decodeAlterShareGroupOffsetsResponse, type AlterShareGroupOffsetsResponse } from '../../src/protocol/generated/messages/alter-share-group-offsets-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse } from '../../src/protocol/generated/messages/find-coordinator-response.js';
import { WireClient } from '../broker/wire.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';
import { createTopicWithId } from '../helpers/share-wire.js';

const TOPIC = 'fenced-alter';
const GROUP = 'fenced-alter-group';

let cluster: RunningCluster;
let c: WireClient;

beforeAll(async () => {
  cluster = await startCluster({ nodes: 1, overrides: { 'offsets.topic.replication.factor': 1, 'share.coordinator.state.topic.replication.factor': 1 } });
  c = await WireClient.connect(cluster.node(1).port);
}, 90_000);

afterAll(async () => {
  c?.close();
  cluster?.etcd.resume();
  await cluster?.destroy();
});

/** FindCoordinator v6 of one key: the node creates the coordinator's internal topic on first use. */
async function findCoordinator(keyType: number, key: string): Promise<number> {
  const r = decodeFindCoordinatorResponse(await c.call(10, 6, (w) => encodeFindCoordinatorRequest(w, { keyType, coordinatorKeys: [key] }, 6)), 6);
  return r.coordinators[0]!.errorCode;
}

async function alter(startOffset: bigint): Promise<AlterShareGroupOffsetsResponse> {
  const r = await c.call(91, 0, (w) => encodeAlterShareGroupOffsetsRequest(w, { groupId: GROUP, topics: [{ topicName: TOPIC, partitions: [{ partitionIndex: 0, startOffset }] }] }, 0), 20_000);
  return decodeAlterShareGroupOffsetsResponse(r, 0);
}

it('answers NOT_LEADER_OR_FOLLOWER for a partition its fenced node still leads in its image', async () => {
  const topicId = await createTopicWithId(c, TOPIC, 1);
  await eventually('the group and share coordinators', async () => (await findCoordinator(0, GROUP)) === ErrorCode.NONE && (await findCoordinator(2, `${GROUP}:${topicId}:0`)) === ErrorCode.NONE);
  // Unfenced, the node takes the new start offset (the group is created empty on the way).
  await eventually('the node to take a start offset', async () => {
    const r = await alter(0n);
    if (r.errorCode === ErrorCode.NONE && r.responses[0]?.partitions[0]?.errorCode === ErrorCode.NONE) return true;
    throw new Error(`last answer ${JSON.stringify(r)}`);
  });
  cluster.etcd.pause();
  await eventually('the node to fence itself', async () => (cluster.node(1).logs().includes('"msg":"broker fenced"') ? true : null));
  const r = await alter(5n);
  expect(r.errorCode).toBe(ErrorCode.NONE);
  expect(r.responses[0]!.partitions).toEqual([{ partitionIndex: 0, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: null }]);
}, 90_000);
