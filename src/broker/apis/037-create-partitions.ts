/**
 * CreatePartitions (key 37), v0-3.
 *
 * Behavior: the new total must exceed the current count (INVALID_PARTITIONS otherwise); new
 * partitions get the topic's replication factor, placed across live brokers, or the explicit
 * assignments, which must give one list of distinct live brokers per new partition, all of the
 * same length (INVALID_REPLICA_ASSIGNMENT); ValidateOnly writes nothing;
 * new partitions start at leader epoch 0 and their logs are opened on first use. A topic named
 * twice fails with INVALID_REQUEST. A mirror topic that is not stopped is refused with
 * READ_ONLY_TOPIC: its partitions follow the source's, added by the mirror (KIP-1279).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeCreatePartitionsRequest, type CreatePartitionsRequest } from '../../protocol/generated/messages/create-partitions-request.js';
import { encodeCreatePartitionsResponse, type CreatePartitionsResponseInput } from '../../protocol/generated/messages/create-partitions-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import { THROTTLING_QUOTA_EXCEEDED_MESSAGE } from '../../quota/broker-quotas.js';
import type { BrokerContext } from '../broker-context.js';
import { MirrorPartitionState } from '../../mirror/mirror-partition-state.js';
import { EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP } from '../../controller/user-operation-limit.js';

type Result = NonNullable<CreatePartitionsResponseInput['results']>[number];

export function createPartitionsHandler(ctx: BrokerContext): ApiHandler<CreatePartitionsRequest, CreatePartitionsResponseInput> {
  return {
    apiKey: 37,
    minVersion: 0,
    maxVersion: 3,
    decode: decodeCreatePartitionsRequest,
    encode: encodeCreatePartitionsResponse,
    async handle(rc, req) {
      const counts = new Map<string, number>();
      for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
      const results: Result[] = [];
      // One partition record per new partition, counted before anything is placed: past Kafka's
      // bound the whole request is refused.
      let records = 0;
      for (const t of req.topics) {
        const current = (counts.get(t.name) ?? 0) > 1 ? undefined : ctx.image.topic(t.name)?.partitions.length;
        if (current !== undefined && t.count > current) records += t.count - current;
      }
      if (records > MAX_RECORDS_PER_USER_OP) {
        return { throttleTimeMs: 0, results: req.topics.map((t) => ({ name: t.name, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_BATCH_MESSAGE })) };
      }
      // KIP-599: v3+ refuse new partitions over controller_mutation_rate, older versions are only throttled.
      const quota = ctx.quotas.mutationQuota(rc, rc.apiVersion >= 3);
      for (const t of req.topics) {
        const out = (errorCode: number, errorMessage: string | null): Result => ({ name: t.name, errorCode, errorMessage });
        if ((counts.get(t.name) ?? 0) > 1) {
          results.push(out(ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'));
          continue;
        }
        const topic = ctx.image.topic(t.name);
        if (!topic) {
          results.push(out(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${t.name}' does not exist.`));
          continue;
        }
        // A mirrored topic's partitions follow the source's (the mirror adds them itself).
        if (topic.mirror !== null && topic.mirror.desiredState !== MirrorPartitionState.STOPPED) {
          results.push(out(ErrorCode.READ_ONLY_TOPIC, `Topic ${t.name} is mirrored by ${topic.mirror.mirrorName}; its partitions follow the source topic's.`));
          continue;
        }
        const current = topic.partitions.length;
        if (t.count <= current) {
          results.push(
            out(
              ErrorCode.INVALID_PARTITIONS,
              t.count === current ? `Topic already has ${current} partitions.` : `The topic ${t.name} currently has ${current} partition(s); ${t.count} would not be an increase.`,
            ),
          );
          continue;
        }
        const assignment = t.assignments?.map((a) => a.brokerIds);
        if (assignment && assignment.length !== t.count - current) {
          results.push(out(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Attempted to add ${t.count - current} additional partition(s), but only ${assignment.length} assignment(s) were specified.`));
          continue;
        }
        const placed = ctx.controller.placement(t.name, current, t.count - current, assignment ? { assignment } : { replicationFactor: topic.partitions[0]?.replicas.length ?? 1 });
        if (!Array.isArray(placed)) {
          results.push(out(placed.errorCode, placed.errorMessage));
          continue;
        }
        if (req.validateOnly) {
          results.push(out(ErrorCode.NONE, null));
          continue;
        }
        if (!quota.tryRecord(t.count - current)) {
          results.push(out(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE));
          continue;
        }
        const res = await ctx.controller.createPartitions(t.name, t.count, assignment);
        results.push(out(res.errorCode, res.errorMessage));
      }
      return { throttleTimeMs: ctx.quotas.throttleMutations(rc, quota), results };
    },
  };
}
