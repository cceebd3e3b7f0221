/**
 * Metadata (key 3), v0-13.
 *
 * Behavior:
 * - Brokers: a node alone lists itself at the address the client connected to; in a cluster the
 *   live registrations at their advertised addresses (a fenced or lost node is not listed).
 *   ControllerId is the active controller (Java, KafkaJS, librdkafka and franz-go send admin
 *   requests to the controller and wait while it is -1; any Fjord node serves them).
 * - Topics: v0 empty list or v1+ null = all topics, internal ones included. An unknown topic is
 *   created when AllowAutoTopicCreation (always true before v4) and auto.create.topics.enable
 *   allow it. As Kafka's AutoTopicCreationManager does, the creation runs in the background and
 *   this answer says UNKNOWN_TOPIC_OR_PARTITION with no partitions; clients retry on that code
 *   and see the topic on a later request (so reading a just-deleted topic's partitions does not
 *   hand back a re-created topic in the same answer).
 * - Lookup by topic id (v12+, Kafka's rules): when any requested topic has a non-zero id, the
 *   answer covers exactly the distinct requested ids (names ignored, no auto-creation); a known id
 *   answers with its name, an unknown one UNKNOWN_TOPIC_ID with a null name.
 * - Requests Kafka fails as a whole get Kafka's error answer (MetadataRequest.getErrorResponse):
 *   no brokers, controller -1, every requested entry echoed with the error, its name ("" for
 *   null) and id, no partitions; nothing is auto-created. That is INVALID_REQUEST for a null name
 *   or a non-zero id at v10-11 (the fields exist, the lookup by id does not), and
 *   UNKNOWN_SERVER_ERROR at v12+ for an entry with neither name nor id when no id is given
 *   (Kafka's KafkaApis looks the null name up and fails).
 * - Partitions: leader, leader epoch, replicas and ISR from the metadata image; replicas whose
 *   broker is not live are OfflineReplicas, and a partition without a leader (-1) answers
 *   LEADER_NOT_AVAILABLE (Kafka's MetadataCache).
 *
 * Version notes: TopicAuthorizedOperations (v8+) = every topic operation when asked (no
 * authorizer), to every named topic of the answer, one answered with an error too, as Kafka;
 * ClusterAuthorizedOperations (v8-10) likewise; top-level ErrorCode v13+.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeMetadataRequest, type MetadataRequest } from '../../protocol/generated/messages/metadata-request.js';
import { encodeMetadataResponse, type MetadataResponseInput } from '../../protocol/generated/messages/metadata-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import { INTERNAL_TOPICS, type BrokerContext } from '../broker-context.js';
import { topicNameError } from '../../controller/controller.js';
import type { TopicImage } from '../../controller/metadata-image.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const NOT_REQUESTED = -2147483648;
/** READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (AclOperation codes). */
export const TOPIC_OPERATIONS = [3, 4, 5, 6, 7, 8, 10, 11].reduce((m, op) => m | (1 << op), 0);
/** CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS. */
export const CLUSTER_OPERATIONS = [5, 7, 8, 9, 10, 11, 12, 13, 14].reduce((m, op) => m | (1 << op), 0);

type TopicOut = NonNullable<MetadataResponseInput['topics']>[number];

/**
 * The error Kafka fails a whole Metadata request with, or null: INVALID_REQUEST for a null name
 * or a non-zero id at v10-11, UNKNOWN_SERVER_ERROR at v12+ for a null name when no id is given.
 */
export function metadataRequestError(req: MetadataRequest, version: number): number | null {
  if (req.topics === null || (version === 0 && req.topics.length === 0)) return null;
  const byId = req.topics.some((rt) => rt.topicId !== undefined && rt.topicId !== ZERO_UUID);
  const nullName = req.topics.some((rt) => rt.name === null);
  if (version < 12 && (nullName || byId)) return ErrorCode.INVALID_REQUEST;
  return !byId && nullName ? ErrorCode.UNKNOWN_SERVER_ERROR : null;
}

/** Kafka's answer to a Metadata request it fails as a whole (MetadataRequest.getErrorResponse). */
function failedRequest(req: MetadataRequest, version: number, errorCode: number): MetadataResponseInput {
  return {
    throttleTimeMs: 0,
    brokers: [],
    ...(version >= 2 ? { clusterId: null } : {}),
    ...(version >= 1 ? { controllerId: -1 } : {}),
    topics: (req.topics ?? []).map((rt) => ({
      errorCode,
      name: rt.name ?? '',
      topicId: rt.topicId ?? ZERO_UUID,
      ...(version >= 1 ? { isInternal: false } : {}),
      partitions: [],
      ...(version >= 8 ? { topicAuthorizedOperations: NOT_REQUESTED } : {}),
    })),
    ...(version >= 8 && version <= 10 ? { clusterAuthorizedOperations: NOT_REQUESTED } : {}),
    errorCode,
  };
}

export function topicMetadata(ctx: BrokerContext, t: TopicImage, version: number, includeOps: boolean): TopicOut {
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.topicId,
    ...(version >= 1 ? { isInternal: INTERNAL_TOPICS.has(t.name) } : {}),
    partitions: t.partitions.map((p) => {
      // A fenced node (lease lapsed, or metadata not caught up) names no leader where it would name itself.
      const leader = p.leader === ctx.nodeId && ctx.cluster.fenced ? -1 : p.leader;
      return {
        errorCode: leader < 0 ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
        partitionIndex: p.partition,
        leaderId: leader,
        ...(version >= 7 ? { leaderEpoch: p.leaderEpoch } : {}),
        replicaNodes: p.replicas,
        isrNodes: p.isr,
        offlineReplicas: p.replicas.filter((r) => !ctx.cluster.isLive(r)),
      };
    }),
    ...(version >= 8 ? { topicAuthorizedOperations: includeOps ? TOPIC_OPERATIONS : NOT_REQUESTED } : {}),
  };
}

/**
 * The brokers a client is told about. In a cluster each registration lists its listeners; the
 * one of the listener the request came in on is reported (Kafka answers per listener name).
 */
export function metadataBrokers(ctx: BrokerContext, listener: { name?: string; host: string; port: number } | null | undefined): { nodeId: number; host: string; port: number; rack: string | null }[] {
  if (!ctx.cluster.distributed) return [{ nodeId: ctx.nodeId, host: listener?.host ?? ctx.host, port: listener?.port ?? ctx.port, rack: null }];
  return ctx.cluster.liveBrokers().map((b) => {
    const ep = (listener?.name !== undefined ? b.endpoints.find((e) => e.name === listener.name) : undefined) ?? { host: b.host, port: b.port };
    return { nodeId: b.nodeId, host: ep.host, port: ep.port, rack: b.rack };
  });
}

export function metadataHandler(ctx: BrokerContext): ApiHandler<MetadataRequest, MetadataResponseInput> {
  return {
    apiKey: 3,
    minVersion: 0,
    maxVersion: 13,
    decode: decodeMetadataRequest,
    encode: encodeMetadataResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const includeOps = v >= 8 && req.includeTopicAuthorizedOperations;
      const all = req.topics === null || (v === 0 && req.topics.length === 0);
      // v10-11 carry the fields but the lookup by id exists only from v12 (Kafka refuses it).
      const failed = metadataRequestError(req, v);
      if (failed !== null) return failedRequest(req, v, failed);
      const byId = (req.topics ?? []).some((rt) => rt.topicId !== undefined && rt.topicId !== ZERO_UUID);
      const topics: TopicOut[] = [];
      if (all) {
        for (const t of ctx.image.topicsByName.values()) topics.push(topicMetadata(ctx, t, v, includeOps));
      } else if (byId) {
        // Lookup by id: any non-zero id makes the ids the whole question (names are ignored, as
        // in Kafka); an unknown id answers UNKNOWN_TOPIC_ID with a null name; never auto-creates.
        const seen = new Set<string>();
        for (const rt of req.topics ?? []) {
          const id = rt.topicId;
          if (id === undefined || id === ZERO_UUID || seen.has(id)) continue;
          seen.add(id);
          const t = ctx.image.topicsById.get(id);
          topics.push(t ? topicMetadata(ctx, t, v, includeOps) : { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, name: null, topicId: id, partitions: [] });
        }
      } else {
        const allowAuto = v < 4 || req.allowAutoTopicCreation;
        // Kafka gives every named topic of its answer its operations, one it answers with an error too.
        const ops = v >= 8 ? { topicAuthorizedOperations: includeOps ? TOPIC_OPERATIONS : NOT_REQUESTED } : {};
        for (const rt of req.topics ?? []) {
          const name = rt.name;
          if (name === null || name === undefined) continue;
          const t = ctx.image.topic(name);
          if (!t && allowAuto && ctx.configs.brokerValue('auto.create.topics.enable') === 'true' && !INTERNAL_TOPICS.has(name)) {
            if (topicNameError(name) !== null) {
              topics.push({ errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, name, topicId: ZERO_UUID, partitions: [], ...ops });
              continue;
            }
            // Not awaited: the answer never waits for the creation (Kafka's order); a failure
            // shows on the next request as the topic still missing.
            void ctx.autoCreateTopic(name).catch(() => undefined);
          }
          if (!t) {
            // Kafka names an invalid name as such whether or not it would have created the topic.
            const code = topicNameError(name) !== null ? ErrorCode.INVALID_TOPIC_EXCEPTION : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
            topics.push({ errorCode: code, name, topicId: ZERO_UUID, partitions: [], ...ops });
            continue;
          }
          topics.push(topicMetadata(ctx, t, v, includeOps));
        }
      }
      return {
        throttleTimeMs: 0,
        brokers: metadataBrokers(ctx, rc.listener),
        ...(v >= 2 ? { clusterId: ctx.clusterId } : {}),
        ...(v >= 1 ? { controllerId: ctx.cluster.controllerId() } : {}),
        topics,
        ...(v >= 8 && v <= 10 ? { clusterAuthorizedOperations: req.includeClusterAuthorizedOperations ? CLUSTER_OPERATIONS : NOT_REQUESTED } : {}),
        errorCode: ErrorCode.NONE,
      };
    },
  };
}
