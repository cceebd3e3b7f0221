import type { ApiHandler, RequestContext } from '../server/api-handler.js';
import type { Reader } from '../protocol/reader.js';
import type { Writer } from '../protocol/writer.js';
import { decodeFindCoordinatorRequest } from '../protocol/generated/messages/find-coordinator-request.js';
import type { FindCoordinatorRequest } from '../protocol/generated/messages/find-coordinator-request.js';
import { encodeFindCoordinatorResponse } from '../protocol/generated/messages/find-coordinator-response.js';
import type { FindCoordinatorResponseInput } from '../protocol/generated/messages/find-coordinator-response.js';
import { decodeJoinGroupRequest } from '../protocol/generated/messages/join-group-request.js';
import type { JoinGroupRequest } from '../protocol/generated/messages/join-group-request.js';
import { encodeJoinGroupResponse } from '../protocol/generated/messages/join-group-response.js';
import type { JoinGroupResponseInput } from '../protocol/generated/messages/join-group-response.js';
import { decodeSyncGroupRequest } from '../protocol/generated/messages/sync-group-request.js';
import type { SyncGroupRequest } from '../protocol/generated/messages/sync-group-request.js';
import { encodeSyncGroupResponse } from '../protocol/generated/messages/sync-group-response.js';
import type { SyncGroupResponseInput } from '../protocol/generated/messages/sync-group-response.js';
import { decodeHeartbeatRequest } from '../protocol/generated/messages/heartbeat-request.js';
import type { HeartbeatRequest } from '../protocol/generated/messages/heartbeat-request.js';
import { encodeHeartbeatResponse } from '../protocol/generated/messages/heartbeat-response.js';
import type { HeartbeatResponseInput } from '../protocol/generated/messages/heartbeat-response.js';
import { decodeLeaveGroupRequest } from '../protocol/generated/messages/leave-group-request.js';
import type { LeaveGroupRequest } from '../protocol/generated/messages/leave-group-request.js';
import { encodeLeaveGroupResponse } from '../protocol/generated/messages/leave-group-response.js';
import type { LeaveGroupResponseInput } from '../protocol/generated/messages/leave-group-response.js';
import { decodeOffsetDeleteRequest } from '../protocol/generated/messages/offset-delete-request.js';
import type { OffsetDeleteRequest } from '../protocol/generated/messages/offset-delete-request.js';
import { encodeOffsetDeleteResponse } from '../protocol/generated/messages/offset-delete-response.js';
import type { OffsetDeleteResponseInput } from '../protocol/generated/messages/offset-delete-response.js';
import { decodeListGroupsRequest } from '../protocol/generated/messages/list-groups-request.js';
import type { ListGroupsRequest } from '../protocol/generated/messages/list-groups-request.js';
import { encodeListGroupsResponse } from '../protocol/generated/messages/list-groups-response.js';
import type { ListGroupsResponseInput } from '../protocol/generated/messages/list-groups-response.js';
import { decodeDescribeGroupsRequest } from '../protocol/generated/messages/describe-groups-request.js';
import type { DescribeGroupsRequest } from '../protocol/generated/messages/describe-groups-request.js';
import { encodeDescribeGroupsResponse } from '../protocol/generated/messages/describe-groups-response.js';
import type { DescribeGroupsResponseInput } from '../protocol/generated/messages/describe-groups-response.js';
import { decodeDeleteGroupsRequest } from '../protocol/generated/messages/delete-groups-request.js';
import type { DeleteGroupsRequest } from '../protocol/generated/messages/delete-groups-request.js';
import { encodeDeleteGroupsResponse } from '../protocol/generated/messages/delete-groups-response.js';
import type { DeleteGroupsResponseInput } from '../protocol/generated/messages/delete-groups-response.js';
import type { CoordinatorHost } from './coordinator-host.js';
import { CONSUMER_OFFSETS, GroupCoordinator, type GroupCoordinatorOptions } from './group-coordinator.js';
import { partitionForKey } from './coordinator-runtime.js';
import { TRANSACTION_STATE } from './txn-coordinator.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { GROUP_OPERATIONS } from './group-operations.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { ClassicState } from './classic-group.js';
import { consumerGroupHandlers } from './consumer-group-handlers.js';
import { offsetApiHandlers } from './offset-api-handlers.js';

/**
 * The group APIs served by this node's group coordinator. A node alone coordinates every group;
 * on a cluster, the groups whose __consumer_offsets partition it leads.
 */

function handler<Req, Res>(
  apiKey: number,
  minVersion: number,
  maxVersion: number,
  decode: (r: Reader, v: number) => Req,
  encode: (w: Writer, m: Res, v: number) => void,
  handle: (ctx: RequestContext, req: Req) => Promise<Res> | Res,
): ApiHandler<Req, Res> {
  return { apiKey, minVersion, maxVersion, decode, encode, handle };
}

const nz = (s: string | null): string => s ?? '';

/** A share coordinator key: `group:topicId:partition` (Kafka's SharePartitionKey), the id as Kafka prints it (22 base64url characters) or as Fjord does (36, hex with dashes). */
const SHARE_KEY = /^(.+):([A-Za-z0-9_-]{22}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(\d+)$/;

/** The key as the share coordinator hashes it (share-coordinator.ts `shareStateKey`: the topic id in hex with dashes). */
function shareCoordinatorKey(key: string): string {
  const m = SHARE_KEY.exec(key);
  if (m === null || m[2]!.length === 36) return key;
  const hex = Buffer.from(m[2]!, 'base64url').toString('hex');
  return `${m[1]!}:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}:${m[3]!}`;
}

const SHARE_GROUP_STATE = '__share_group_state';

export async function createGroupApiHandlers(
  host: CoordinatorHost,
  opts: GroupCoordinatorOptions = {},
): Promise<{ handlers: ApiHandler[]; close(): Promise<void>; coordinator: GroupCoordinator }> {
  const gc = await GroupCoordinator.start(host, opts);

  /*
   * FindCoordinator v0-6. v0-3 carry one key, v4+ a batch (CoordinatorKeys). Key types 0 (group)
   * and 1 (transaction) are answered with the leader of the key's partition of __consumer_offsets
   * / __transaction_state (this node alone leads them all), or COORDINATOR_NOT_AVAILABLE while
   * that partition has no leader, as Kafka's KafkaApis.getCoordinator does. Key type 2 (share,
   * v6+, sent by share-partition leaders) names the share coordinator of the key
   * `group:topicId:partition`, the leader of its __share_group_state partition; a malformed key
   * or an older version is INVALID_REQUEST.
   */
  const txnPartitions = Number(host.config('transaction.state.log.num.partitions') ?? 50);
  const sharePartitions = Number(host.config('share.coordinator.state.topic.num.partitions') ?? 50);
  const findCoordinator = handler<FindCoordinatorRequest, FindCoordinatorResponseInput>(
    10, 0, 6, decodeFindCoordinatorRequest, encodeFindCoordinatorResponse,
    (ctx, req) => {
      const self = { nodeId: host.nodeId, host: ctx.listener?.host ?? host.host, port: ctx.listener?.port ?? host.port };
      const answer = (key: string): { errorCode: number; errorMessage: string | null; nodeId: number; host: string; port: number } => {
        const none = { nodeId: -1, host: '', port: -1 };
        if (req.keyType !== 0 && req.keyType !== 1 && req.keyType !== 2) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `key type ${req.keyType} is not served`, ...none };
        if (req.keyType === 2 && (ctx.apiVersion < 6 || !SHARE_KEY.test(key))) {
          return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: ctx.apiVersion < 6 ? 'Share coordinators need FindCoordinator v6.' : `Invalid share coordinator key ${key}.`, ...none };
        }
        const leadership = host.leadership;
        if (leadership === undefined) {
          if (req.keyType === 0) gc.preload(key);
          return { errorCode: ErrorCode.NONE, errorMessage: null, ...self };
        }
        const [topic, partitions] = req.keyType === 0 ? [CONSUMER_OFFSETS, gc.runtime.partitions] : req.keyType === 1 ? [TRANSACTION_STATE, txnPartitions] : [SHARE_GROUP_STATE, sharePartitions];
        const partition = partitionForKey(req.keyType === 2 ? shareCoordinatorKey(key) : key, partitions);
        const leader = leadership.leaderEndpoint(topic, partition, ctx.listener?.name);
        if (leader === null) {
          leadership.ensureTopic(topic, partitions);
          return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: `${topic}-${partition} has no leader`, ...none };
        }
        return { errorCode: ErrorCode.NONE, errorMessage: null, ...(leader.nodeId === host.nodeId ? self : leader) };
      };
      if (ctx.apiVersion < 4) {
        const a = answer(req.key);
        return {
          errorCode: a.errorCode,
          ...(ctx.apiVersion >= 1 ? { errorMessage: a.errorMessage } : {}),
          nodeId: a.nodeId,
          host: a.host,
          port: a.port,
        };
      }
      return { coordinators: req.coordinatorKeys.map((key) => ({ key, ...answer(key) })) };
    },
  );

  /*
   * JoinGroup v0-9. v0 has no rebalance timeout (the session timeout serves); v4+ an unknown
   * member first gets MEMBER_ID_REQUIRED with its id; v5 static membership; v7 echoes the
   * protocol type; v9 SkipAssignment for a static leader rejoining.
   */
  const joinGroup = handler<JoinGroupRequest, JoinGroupResponseInput>(
    11, 0, 9, decodeJoinGroupRequest, encodeJoinGroupResponse,
    async (ctx, req) => {
      const v = ctx.apiVersion;
      try {
        const r = await gc.join({
          groupId: req.groupId,
          sessionTimeoutMs: req.sessionTimeoutMs,
          rebalanceTimeoutMs: v >= 1 && req.rebalanceTimeoutMs >= 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
          memberId: req.memberId,
          groupInstanceId: v >= 5 ? req.groupInstanceId : null,
          protocolType: req.protocolType,
          protocols: req.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
          clientId: ctx.clientId ?? '',
          clientHost: ctx.clientAddress,
          requireKnownMemberId: v >= 4,
        });
        return {
          errorCode: r.errorCode,
          generationId: r.generationId,
          ...(v >= 7 ? { protocolType: r.protocolType, protocolName: r.protocolName } : { protocolName: nz(r.protocolName) }),
          leader: r.leader,
          ...(v >= 9 ? { skipAssignment: r.skipAssignment } : {}),
          memberId: r.memberId,
          members: r.members.map((m) => ({ memberId: m.memberId, ...(v >= 5 ? { groupInstanceId: m.groupInstanceId } : {}), metadata: m.metadata })),
        };
      } catch (e) {
        return { errorCode: errorCodeOf(e), memberId: req.memberId, ...(v >= 7 ? { protocolName: null } : {}) };
      }
    },
  );

  /* SyncGroup v0-5: the leader sends every member's assignment; v5 echoes protocol type and name. */
  const syncGroup = handler<SyncGroupRequest, SyncGroupResponseInput>(
    14, 0, 5, decodeSyncGroupRequest, encodeSyncGroupResponse,
    async (ctx, req) => {
      const v = ctx.apiVersion;
      try {
        const r = await gc.sync({
          groupId: req.groupId,
          generationId: req.generationId,
          memberId: req.memberId,
          groupInstanceId: v >= 3 ? req.groupInstanceId : null,
          protocolType: v >= 5 ? req.protocolType : null,
          protocolName: v >= 5 ? req.protocolName : null,
          assignments: req.assignments.map((a) => ({ memberId: a.memberId, assignment: a.assignment })),
        });
        return { errorCode: r.errorCode, ...(v >= 5 ? { protocolType: r.protocolType, protocolName: r.protocolName } : {}), assignment: r.assignment };
      } catch (e) {
        return { errorCode: errorCodeOf(e) };
      }
    },
  );

  /* Heartbeat v0-4: REBALANCE_IN_PROGRESS tells the member to rejoin. */
  const heartbeat = handler<HeartbeatRequest, HeartbeatResponseInput>(
    12, 0, 4, decodeHeartbeatRequest, encodeHeartbeatResponse,
    async (ctx, req) => {
      try {
        const errorCode = await gc.heartbeat({ groupId: req.groupId, generationId: req.generationId, memberId: req.memberId, groupInstanceId: ctx.apiVersion >= 3 ? req.groupInstanceId : null });
        return { errorCode };
      } catch (e) {
        return { errorCode: errorCodeOf(e) };
      }
    },
  );

  /* LeaveGroup v0-5: v0-2 one member id; v3+ a batch of (member id, instance id). */
  const leaveGroup = handler<LeaveGroupRequest, LeaveGroupResponseInput>(
    13, 0, 5, decodeLeaveGroupRequest, encodeLeaveGroupResponse,
    async (ctx, req) => {
      const v = ctx.apiVersion;
      const members = v >= 3 ? req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId })) : [{ memberId: req.memberId, groupInstanceId: null }];
      try {
        const r = await gc.leave(req.groupId, members);
        if (v < 3) return { errorCode: r.errorCode !== ErrorCode.NONE ? r.errorCode : (r.members[0]?.errorCode ?? ErrorCode.NONE) };
        return { errorCode: r.errorCode, members: r.members };
      } catch (e) {
        return { errorCode: errorCodeOf(e) };
      }
    },
  );

  /* OffsetDelete v0: refused per partition while a live consumer group subscribes to the topic. */
  const offsetDelete = handler<OffsetDeleteRequest, OffsetDeleteResponseInput>(
    47, 0, 0, decodeOffsetDeleteRequest, encodeOffsetDeleteResponse,
    async (_ctx, req) => {
      try {
        return await gc.deleteOffsets(req.groupId, req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) })));
      } catch (e) {
        return { errorCode: errorCodeOf(e) };
      }
    },
  );

  /* ListGroups v0-5: v4 states filter, v5 types filter ("classic", "consumer", "streams", "share"). */
  const listGroups = handler<ListGroupsRequest, ListGroupsResponseInput>(
    16, 0, 5, decodeListGroupsRequest, encodeListGroupsResponse,
    async (ctx, req) => {
      const v = ctx.apiVersion;
      try {
        const groups = await gc.listGroups(v >= 4 ? req.statesFilter : [], v >= 5 ? req.typesFilter : []);
        return {
          groups: groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, ...(v >= 4 ? { groupState: g.groupState } : {}), ...(v >= 5 ? { groupType: g.groupType } : {}) })),
        };
      } catch (e) {
        return { errorCode: errorCodeOf(e) };
      }
    },
  );

  /* DescribeGroups v0-6: unknown groups are Dead (v6: GROUP_ID_NOT_FOUND); consumer groups are described as classic-compatible. */
  const describeGroups = handler<DescribeGroupsRequest, DescribeGroupsResponseInput>(
    15, 0, 6, decodeDescribeGroupsRequest, encodeDescribeGroupsResponse,
    async (ctx, req) => {
      const v = ctx.apiVersion;
      const groups = await Promise.all(
        req.groups.map(async (groupId) => {
          try {
            const d = await gc.describeGroup(groupId);
            const notFound = d.errorCode === ErrorCode.GROUP_ID_NOT_FOUND;
            return {
              errorCode: notFound && v < 6 ? ErrorCode.NONE : d.errorCode,
              ...(v >= 6 && notFound ? { errorMessage: d.errorMessage ?? `Group ${groupId} not found.` } : {}),
              groupId,
              groupState: notFound ? ClassicState.DEAD : d.groupState,
              protocolType: d.protocolType,
              protocolData: d.protocolData,
              members: d.members.map((m) => ({ ...m, ...(v >= 4 ? {} : { groupInstanceId: null }) })),
              ...(v >= 3 ? { authorizedOperations: req.includeAuthorizedOperations ? GROUP_OPERATIONS : -2147483648 } : {}),
            };
          } catch (e) {
            return { errorCode: errorCodeOf(e), groupId, groupState: '', protocolType: '', protocolData: '', members: [] };
          }
        }),
      );
      return { groups };
    },
  );

  /*
   * DeleteGroups v0-3: only empty groups; their offsets go with them. v3 adds a per-group
   * ErrorMessage, which Kafka's GroupCoordinatorService leaves null for the group-state answers
   * (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND), as here.
   */
  const deleteGroups = handler<DeleteGroupsRequest, DeleteGroupsResponseInput>(
    42, 0, 3, decodeDeleteGroupsRequest, encodeDeleteGroupsResponse,
    async (_ctx, req) => ({ results: await gc.deleteGroups(req.groupsNames) }),
  );

  // group.coordinator.rebalance.protocols: without "consumer" the KIP-848 APIs are not offered,
  // so clients fall back to (or fail over to) the classic protocol as with Kafka.
  const protocols = (host.config('group.coordinator.rebalance.protocols') ?? 'classic,consumer').split(',').map((p) => p.trim().toLowerCase());
  const handlers = [
    findCoordinator, joinGroup, syncGroup, heartbeat, leaveGroup, ...offsetApiHandlers(host, gc),
    offsetDelete, listGroups, describeGroups, deleteGroups, ...(protocols.includes('consumer') ? consumerGroupHandlers(gc) : []),
  ];
  return { handlers, close: () => gc.close(), coordinator: gc };
}
