/**
 * DeleteTopics (key 20), v1-6.
 *
 * Behavior:
 * - By name (v1-5 TopicNames, v6 Topics with a name) or by id (v6 Topics with a null name).
 * - Unknown name → UNKNOWN_TOPIC_OR_PARTITION, unknown id → UNKNOWN_TOPIC_ID; delete.topic.enable
 *   false → TOPIC_DELETION_DISABLED; internal topics are refused (INVALID_TOPIC_EXCEPTION) because
 *   the coordinators live on them. A topic bound to a cluster mirror whose desired state is not
 *   STOPPED → MIRROR_TOPIC_NOT_STOPPED (stop it first; KIP-1279).
 * - A RemoveTopicRecord is written per topic; the replica manager then closes and deletes the
 *   partition logs (the metadata change listener), so the name can be reused at once.
 *
 * Version notes: v5+ carry ErrorMessage; v6 answers with name and id.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDeleteTopicsRequest, type DeleteTopicsRequest } from '../../protocol/generated/messages/delete-topics-request.js';
import { encodeDeleteTopicsResponse, type DeleteTopicsResponseInput } from '../../protocol/generated/messages/delete-topics-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import { MirrorPartitionState } from '../../mirror/mirror-partition-state.js';
import { THROTTLING_QUOTA_EXCEEDED_MESSAGE } from '../../quota/broker-quotas.js';
import { INTERNAL_TOPICS, type BrokerContext } from '../broker-context.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
type Result = NonNullable<DeleteTopicsResponseInput['responses']>[number];

export function deleteTopicsHandler(ctx: BrokerContext): ApiHandler<DeleteTopicsRequest, DeleteTopicsResponseInput> {
  return {
    apiKey: 20,
    minVersion: 1,
    maxVersion: 6,
    decode: decodeDeleteTopicsRequest,
    encode: encodeDeleteTopicsResponse,
    async handle(rc, req) {
      const v = rc.apiVersion;
      const wanted: { name: string | null; topicId: string }[] =
        v >= 6 ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId })) : req.topicNames.map((n) => ({ name: n, topicId: ZERO_UUID }));
      const responses: Result[] = [];
      // KIP-599: v5+ refuse a deletion over controller_mutation_rate (counted in partitions).
      const quota = ctx.quotas.mutationQuota(rc, v >= 5);
      for (const w of wanted) {
        const byName = w.name !== null;
        const t = byName ? ctx.image.topic(w.name!) : ctx.image.topicsById.get(w.topicId);
        const out = (errorCode: number, errorMessage: string | null): Result => ({
          name: t?.name ?? (v >= 6 ? w.name : (w.name ?? '')),
          ...(v >= 6 ? { topicId: t?.topicId ?? w.topicId } : {}),
          errorCode,
          ...(v >= 5 ? { errorMessage } : {}),
        });
        if (!t) {
          responses.push(byName ? out(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.') : out(ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.'));
          continue;
        }
        if (!ctx.config.bool('delete.topic.enable')) {
          responses.push(out(ErrorCode.TOPIC_DELETION_DISABLED, 'Topic deletion is disabled.'));
          continue;
        }
        if (INTERNAL_TOPICS.has(t.name)) {
          responses.push(out(ErrorCode.INVALID_TOPIC_EXCEPTION, `Internal topic ${t.name} cannot be deleted.`));
          continue;
        }
        // A mirrored topic is the source's until it is stopped (KIP-1279): deleting it under a
        // running fetcher would leave the mirror a partition nobody can stop. Stop it first.
        if (t.mirror !== null && t.mirror.desiredState !== MirrorPartitionState.STOPPED) {
          responses.push(out(ErrorCode.MIRROR_TOPIC_NOT_STOPPED, `Topic ${t.name} is mirrored by ${t.mirror.mirrorName}; stop its mirroring before deleting it.`));
          continue;
        }
        if (!quota.tryRecord(t.partitions.length)) {
          responses.push(out(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE));
          continue;
        }
        const res = await ctx.controller.deleteTopic(t.topicId);
        responses.push(out(res.errorCode, res.errorMessage));
      }
      return { throttleTimeMs: ctx.quotas.throttleMutations(rc, quota), responses };
    },
  };
}
