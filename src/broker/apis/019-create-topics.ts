/**
 * CreateTopics (key 19), v2-8.
 *
 * Behavior:
 * - NumPartitions / ReplicationFactor -1 take num.partitions / default.replication.factor.
 *   Replicas are placed across the live brokers (rack-aware, preferred leader first); a
 *   replication factor above the live broker count is INVALID_REPLICATION_FACTOR with Kafka's
 *   message. Explicit assignments name live brokers, distinct, one count for every partition,
 *   for partitions 0..n-1 (INVALID_REPLICA_ASSIGNMENT), and then fix the partition count.
 * - Configs are validated by key and value (INVALID_CONFIG); a topic named twice in one request
 *   fails with INVALID_REQUEST for each occurrence (Kafka's ControllerApis).
 * - Checks run in the order of Kafka's ReplicationControlManager: more than 10,000 partitions asked
 *   in all (summed as a Java int: a sum past 2^31 - 1 wraps negative and passes) fails every topic
 *   (POLICY_VIOLATION); then per topic the name, existence, the configs, the assignments, the
 *   replication factor, the partition count, the placement. The topics that pass may write at most
 *   10,000 metadata records in all, or every topic fails with POLICY_VIOLATION; a topic that fails
 *   its own checks does not count.
 * - ValidateOnly runs every check and writes nothing.
 * - v8 MirrorInfo (KIP-1279): the topic is created with the given topic id; the zero id →
 *   INVALID_REQUEST, an id another topic has → TOPIC_ALREADY_EXISTS, for that topic only.
 * - The topic, its partitions (leader = first replica, epoch 0) and configs are one atomic batch in
 *   the metadata log; the answer comes after it is applied, so Metadata sees the topic at once.
 * - TimeoutMs ≤ 0: Kafka's controller gives the request a deadline already passed, so the whole
 *   request fails with REQUEST_TIMED_OUT before any check (CreateTopicsRequest.getErrorResponse:
 *   every topic named, partitions and replication factor -1, no configs) and nothing is created.
 *   A request whose names are all duplicates never reaches the controller and is answered as
 *   usual (INVALID_REQUEST each).
 *
 * Version notes: v5+ return partitions, replication factor and the effective configs; v7+ the id.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeCreateTopicsRequest, type CreateTopicsRequest } from '../../protocol/generated/messages/create-topics-request.js';
import { encodeCreateTopicsResponse, type CreateTopicsResponseInput } from '../../protocol/generated/messages/create-topics-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { checkTopicConfig } from '../config.js';
import { collidingTopic, topicNameError } from '../../controller/controller.js';
import { EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP } from '../../controller/user-operation-limit.js';
import { THROTTLING_QUOTA_EXCEEDED_MESSAGE } from '../../quota/broker-quotas.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const MAX_PARTITIONS_PER_BATCH = 10_000;
type Result = NonNullable<CreateTopicsResponseInput['topics']>[number];
/** A topic that passed every check, to be created once the whole request has been checked. */
interface Planned {
  readonly planned: true;
  readonly name: string;
  readonly numPartitions: number;
  readonly rf: number;
  readonly configs: ReadonlyMap<string, string>;
  readonly spec: { assignment: number[][] } | { replicationFactor: number };
  readonly mirrorTopicId: string | undefined;
}

export function createTopicsHandler(ctx: BrokerContext): ApiHandler<CreateTopicsRequest, CreateTopicsResponseInput> {
  return {
    apiKey: 19,
    minVersion: 2,
    maxVersion: 8,
    decode: decodeCreateTopicsRequest,
    encode: encodeCreateTopicsResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const counts = new Map<string, number>();
      for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
      if (req.timeoutMs <= 0 && [...counts.values()].some((n) => n === 1)) {
        const topics = req.topics.map((t) => ({ name: t.name, topicId: ZERO_UUID, errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: null, numPartitions: -1, replicationFactor: -1, configs: [] }));
        return { throttleTimeMs: 0, topics };
      }
      // Kafka's controller first adds up the partitions the request asks for, every topic counted
      // (existing ones too, -1 as num.partitions, nothing for a count below -1 or 0; a name given
      // twice never reaches the controller), in a Java int that wraps past 2^31 - 1, and refuses
      // the whole request past 10,000 (ReplicationControlManager.validateTotalNumberOfPartitions),
      // before any other check. A sum that wraps negative passes, and each topic is then checked
      // on its own.
      let asked = 0;
      for (const t of req.topics) {
        if ((counts.get(t.name) ?? 0) !== 1) continue;
        const n = t.assignments.length > 0 ? t.assignments.length : t.numPartitions === -1 ? Number(ctx.configs.brokerValue('num.partitions')) : Math.max(0, t.numPartitions);
        asked = (asked + n) | 0;
      }
      const refuseAll = (): CreateTopicsResponseInput => ({
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({ name: t.name, topicId: ZERO_UUID, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_BATCH_MESSAGE })),
      });
      if (asked > MAX_PARTITIONS_PER_BATCH) return refuseAll();
      // KIP-599: v6+ refuse a topic over controller_mutation_rate, older versions are only throttled.
      const quota = ctx.quotas.mutationQuota(rc, v >= 6);
      // First every topic is checked; then the ones that passed are created, in request order.
      const results: (Result | Planned)[] = [];
      // The records the topics that pass their checks would write (a topic record, its partitions,
      // its configs): Kafka appends them to a list bounded at MAX_RECORDS_PER_USER_OP as each topic
      // passes, and past the bound the whole request fails (QuorumController's
      // BoundedListTooLongException → POLICY_VIOLATION). A topic that fails its own checks adds none.
      let records = 0;
      for (const t of req.topics) {
        const fail = (errorCode: number, errorMessage: string): Result => ({ name: t.name, topicId: ZERO_UUID, errorCode, errorMessage });
        if ((counts.get(t.name) ?? 0) > 1) {
          results.push(fail(ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'));
          continue;
        }
        const nameErr = topicNameError(t.name);
        if (nameErr) {
          results.push(fail(ErrorCode.INVALID_TOPIC_EXCEPTION, nameErr));
          continue;
        }
        if (ctx.image.topic(t.name)) {
          results.push(fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${t.name}' already exists.`));
          continue;
        }
        const collision = collidingTopic(ctx.image, t.name);
        if (collision) {
          results.push(fail(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${t.name}' collides with existing topic: ${collision}`));
          continue;
        }
        // Kafka's controller checks every topic's configs before it looks at partitions and replicas.
        const configs = new Map<string, string>();
        let configErr: string | null = null;
        for (const c of t.configs) {
          configErr = checkTopicConfig(c.name, c.value);
          if (configErr) break;
          if (c.value !== null) configs.set(c.name, c.value);
        }
        if (configErr) {
          results.push(fail(ErrorCode.INVALID_CONFIG, configErr));
          continue;
        }
        let numPartitions = t.numPartitions;
        let rf = t.replicationFactor;
        if (t.assignments.length > 0) {
          if (numPartitions !== -1 || rf !== -1) {
            results.push(fail(ErrorCode.INVALID_REQUEST, 'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.'));
            continue;
          }
          const indexes = t.assignments.map((a) => a.partitionIndex).sort((a, b) => a - b);
          if (indexes.some((p, i) => p !== i)) {
            results.push(fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Partitions in the manual partition assignment must be numbered 0..n-1 without gaps.'));
            continue;
          }
          numPartitions = t.assignments.length;
          rf = t.assignments[0]!.brokerIds.length;
        }
        if (numPartitions === -1) numPartitions = Number(ctx.configs.brokerValue('num.partitions'));
        if (rf === -1) rf = Number(ctx.configs.brokerValue('default.replication.factor'));
        if (rf <= 0) {
          results.push(fail(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.'));
          continue;
        }
        if (numPartitions <= 0) {
          results.push(fail(ErrorCode.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.'));
          continue;
        }
        const spec =
          t.assignments.length > 0
            ? { assignment: [...t.assignments].sort((a, b) => a.partitionIndex - b.partitionIndex).map((a) => a.brokerIds) }
            : { replicationFactor: rf };
        const topicRecords = 1 + numPartitions + configs.size;
        // A topic that would pass the bound is placed for one partition only: whether its replicas
        // can be placed does not depend on the count, and a count such as 2^31 - 1 is never laid out.
        const placed = ctx.controller.placement(t.name, 0, records + topicRecords > MAX_RECORDS_PER_USER_OP ? 1 : numPartitions, spec);
        if (!Array.isArray(placed)) {
          results.push(fail(placed.errorCode, placed.errorMessage ?? ''));
          continue;
        }
        const mirrorTopicId = v >= 8 && t.mirrorInfo ? t.mirrorInfo.topicId : undefined;
        // KIP-1279: an id that no topic can have is a bad request; one another topic has is that
        // topic's (TOPIC_ALREADY_EXISTS). Either fails this topic only; the batch goes on.
        if (mirrorTopicId === ZERO_UUID) {
          results.push(fail(ErrorCode.INVALID_REQUEST, `Topic id ${mirrorTopicId} is not a valid topic id.`));
          continue;
        }
        const holder = mirrorTopicId === undefined ? undefined : ctx.image.topicsById.get(mirrorTopicId);
        if (holder !== undefined) {
          results.push(fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic id ${mirrorTopicId} is already used by topic '${holder.name}'.`));
          continue;
        }
        if (!req.validateOnly && !quota.tryRecord(numPartitions)) {
          results.push(fail(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE));
          continue;
        }
        records += topicRecords;
        if (records > MAX_RECORDS_PER_USER_OP) return refuseAll();
        results.push({ planned: true, name: t.name, numPartitions, rf, configs, spec, mirrorTopicId });
      }
      const topics: Result[] = [];
      for (const r of results) {
        if (!('planned' in r)) {
          topics.push(r);
          continue;
        }
        let topicId = ZERO_UUID;
        if (!req.validateOnly) {
          const res = await ctx.controller.createTopic(r.name, r.numPartitions, r.configs, r.mirrorTopicId, r.spec);
          if (res.errorCode !== 0) {
            topics.push({ name: r.name, topicId: ZERO_UUID, errorCode: res.errorCode, errorMessage: res.errorMessage ?? '' });
            continue;
          }
          topicId = ctx.image.topic(r.name)?.topicId ?? ZERO_UUID;
        }
        const described = req.validateOnly
          ? ctx.configs.describeTopic(r.name).map((c) => (r.configs.has(c.name) ? { ...c, value: r.configs.get(c.name)!, source: 1 } : c))
          : ctx.configs.describeTopic(r.name);
        topics.push({
          name: r.name,
          topicId,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          numPartitions: r.numPartitions,
          replicationFactor: r.rf,
          configs: described.map((c) => ({ name: c.name, value: c.value, readOnly: c.readOnly, configSource: c.source, isSensitive: c.isSensitive })),
        });
      }
      return { throttleTimeMs: ctx.quotas.throttleMutations(rc, quota), topics };
    },
  };
}
