/**
 * One namespace of group ids across group types, over raw sockets to a real node, with the codes
 * and messages of Kafka's GroupMetadataManager: a share group's id refused to ConsumerGroupHeartbeat,
 * StreamsGroupHeartbeat (GROUP_ID_NOT_FOUND "is not a consumer/streams group") and JoinGroup
 * (INCONSISTENT_GROUP_PROTOCOL); consumer and streams ids refused to ShareGroupHeartbeat; the
 * describe APIs of the wrong type; and ListGroups naming every type, share groups included after a
 * restart before any request has touched them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeConsumerGroupHeartbeatRequest } from '../../src/protocol/generated/messages/consumer-group-heartbeat-request.js';
import { decodeConsumerGroupHeartbeatResponse } from '../../src/protocol/generated/messages/consumer-group-heartbeat-response.js';
import { encodeConsumerGroupDescribeRequest } from '../../src/protocol/generated/messages/consumer-group-describe-request.js';
import { decodeConsumerGroupDescribeResponse } from '../../src/protocol/generated/messages/consumer-group-describe-response.js';
import { encodeDescribeGroupsRequest } from '../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeJoinGroupRequest } from '../../src/protocol/generated/messages/join-group-request.js';
import { decodeJoinGroupResponse } from '../../src/protocol/generated/messages/join-group-response.js';
import { encodeListGroupsRequest } from '../../src/protocol/generated/messages/list-groups-request.js';
import { decodeListGroupsResponse } from '../../src/protocol/generated/messages/list-groups-response.js';
import { encodeShareGroupDescribeRequest } from '../../src/protocol/generated/messages/share-group-describe-request.js';
import { decodeShareGroupDescribeResponse } from '../../src/protocol/generated/messages/share-group-describe-response.js';
import { type ShareGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/share-group-heartbeat-request.js';
import { encodeStreamsGroupDescribeRequest } from '../../src/protocol/generated/messages/streams-group-describe-request.js';
import { decodeStreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/streams-group-describe-response.js';
import { encodeStreamsGroupHeartbeatRequest } from '../../src/protocol/generated/messages/streams-group-heartbeat-request.js';
import { decodeStreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/streams-group-heartbeat-response.js';
import { type RunningNode } from '../helpers/node.js';
import { createTopicWithId, nodeWithClient, removeNode, shareHeartbeat } from '../helpers/share-wire.js';
import { WireClient } from '../broker/wire.js';

let node: RunningNode;
let c: WireClient;

const TOPIC = 'ns-topic';

const shareHb = async (req: ShareGroupHeartbeatRequestInput) => shareHeartbeat(c, req);
const consumerJoin = async (groupId: string) =>
  decodeConsumerGroupHeartbeatResponse(await c.call(68, 1, (w) => encodeConsumerGroupHeartbeatRequest(w, { groupId, memberId: `${groupId}-c`, memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: [TOPIC], topicPartitions: [] }, 1)), 1);
const streamsJoin = async (groupId: string) =>
  decodeStreamsGroupHeartbeatResponse(
    await c.call(88, 1, (w) =>
      encodeStreamsGroupHeartbeatRequest(
        w,
        {
          groupId,
          memberId: `${groupId}-s`,
          memberEpoch: 0,
          endpointInformationEpoch: 0,
          rebalanceTimeoutMs: 30000,
          topology: { epoch: 1, subtopologies: [{ subtopologyId: '0', sourceTopics: [TOPIC], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [], repartitionSourceTopics: [], copartitionGroups: [] }] },
          processId: 'p1',
          activeTasks: [],
          standbyTasks: [],
          warmupTasks: [],
          clientTags: [],
        },
        1,
      ),
    ),
    1,
  );
const classicJoin = async (groupId: string) =>
  decodeJoinGroupResponse(
    await c.call(11, 9, (w) => encodeJoinGroupRequest(w, { groupId, sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null }, 9)),
    9,
  );
const listGroups = async (typesFilter: string[] = []) => decodeListGroupsResponse(await c.call(16, 5, (w) => encodeListGroupsRequest(w, { statesFilter: [], typesFilter }, 5)), 5);

beforeAll(async () => {
  ({ node, c } = await nodeWithClient({ 'num.partitions': 1 }));
  await createTopicWithId(c, TOPIC, 2);
  // One group of each modern type, made by its own protocol.
  expect((await shareHb({ groupId: 'ns-share', memberId: 'sm', memberEpoch: 0, subscribedTopicNames: [TOPIC] })).errorCode).toBe(0);
  expect((await consumerJoin('ns-consumer')).errorCode).toBe(0);
  expect((await streamsJoin('ns-streams')).errorCode).toBe(0);
}, 180_000);
afterAll(() => removeNode(node, c));

describe('group ids are one namespace across group types', () => {
  it("refuses a share group's id to the consumer and streams heartbeats and to JoinGroup", async () => {
    expect(await consumerJoin('ns-share')).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group ns-share is not a consumer group.' });
    expect(await streamsJoin('ns-share')).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group ns-share is not a streams group.' });
    expect(await classicJoin('ns-share')).toMatchObject({ errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL, memberId: '' });
    // The share group itself is untouched by the refused requests.
    expect(await shareHb({ groupId: 'ns-share', memberId: 'sm', memberEpoch: 1, subscribedTopicNames: null })).toMatchObject({ errorCode: 0, memberEpoch: 1 });
  });

  it('refuses consumer and streams group ids to ShareGroupHeartbeat, and a heartbeat naming no group', async () => {
    for (const g of ['ns-consumer', 'ns-streams']) {
      expect(await shareHb({ groupId: g, memberId: 'x', memberEpoch: 0, subscribedTopicNames: [TOPIC] })).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${g} is not a share group.` });
    }
    expect(await shareHb({ groupId: 'ns-nobody', memberId: 'x', memberEpoch: 3, subscribedTopicNames: null })).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Share group ns-nobody not found.' });
    expect(await shareHb({ groupId: 'ns-nobody', memberId: 'x', memberEpoch: -1, subscribedTopicNames: null })).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group ns-nobody not found.' });
  });

  it('answers the describe APIs of the wrong type GROUP_ID_NOT_FOUND, "is not a ... group"', async () => {
    const consumer = decodeConsumerGroupDescribeResponse(await c.call(69, 1, (w) => encodeConsumerGroupDescribeRequest(w, { groupIds: ['ns-share'], includeAuthorizedOperations: false }, 1)), 1).groups;
    expect(consumer[0]).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group ns-share is not a consumer group.' });
    const share = decodeShareGroupDescribeResponse(await c.call(77, 1, (w) => encodeShareGroupDescribeRequest(w, { groupIds: ['ns-consumer', 'ns-streams', 'ns-nobody'], includeAuthorizedOperations: false }, 1)), 1).groups;
    expect(share.map((g) => [g.errorCode, g.errorMessage])).toEqual([
      [ErrorCode.GROUP_ID_NOT_FOUND, 'Group ns-consumer is not a share group.'],
      [ErrorCode.GROUP_ID_NOT_FOUND, 'Group ns-streams is not a share group.'],
      [ErrorCode.GROUP_ID_NOT_FOUND, 'Group ns-nobody not found.'],
    ]);
    const streams = decodeStreamsGroupDescribeResponse(await c.call(89, 1, (w) => encodeStreamsGroupDescribeRequest(w, { groupIds: ['ns-share'], includeAuthorizedOperations: false }, 1)), 1).groups;
    expect(streams[0]).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group ns-share is not a streams group.' });
    // DescribeGroups: v6 GROUP_ID_NOT_FOUND "is not a classic group", older versions a Dead group.
    const v6 = decodeDescribeGroupsResponse(await c.call(15, 6, (w) => encodeDescribeGroupsRequest(w, { groups: ['ns-share'], includeAuthorizedOperations: false }, 6)), 6).groups[0]!;
    expect(v6).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group ns-share is not a classic group.', groupState: 'Dead', members: [] });
    const v5 = decodeDescribeGroupsResponse(await c.call(15, 5, (w) => encodeDescribeGroupsRequest(w, { groups: ['ns-share'], includeAuthorizedOperations: false }, 5)), 5).groups[0]!;
    expect(v5).toMatchObject({ errorCode: 0, groupState: 'Dead', members: [] });
  });

  it('ListGroups names every type, and lists the share groups a restarted node holds before anything touches them', async () => {
    const ours = (l: Awaited<ReturnType<typeof listGroups>>) => l.groups.filter((g) => g.groupId.startsWith('ns-')).map((g) => [g.groupId, g.protocolType, g.groupState, g.groupType]);
    expect(ours(await listGroups())).toEqual([
      ['ns-consumer', 'consumer', 'Stable', 'consumer'],
      ['ns-share', 'share', 'Stable', 'share'],
      ['ns-streams', 'streams', 'Stable', 'streams'],
    ]);
    c.close();
    node = await node.restart();
    c = await WireClient.connect(node.port);
    // First request after the restart: nothing has loaded the share group into the share group coordinator.
    expect(ours(await listGroups(['share']))).toEqual([['ns-share', 'share', 'Stable', 'share']]);
    expect(ours(await listGroups())).toEqual([
      ['ns-consumer', 'consumer', 'Stable', 'consumer'],
      ['ns-share', 'share', 'Stable', 'share'],
      ['ns-streams', 'streams', 'Stable', 'streams'],
    ]);
    // Its member leaves: Empty, still listed.
    expect((await shareHb({ groupId: 'ns-share', memberId: 'sm', memberEpoch: -1, subscribedTopicNames: null })).errorCode).toBe(0);
    expect(ours(await listGroups(['SHARE']))).toEqual([['ns-share', 'share', 'Empty', 'share']]);
  }, 120_000);
});
