/**
 * CreatePartitions (key 37), v0-3.
 *
 * Behavior: the new total must exceed the current count (INVALID_PARTITIONS otherwise); explicit
 * assignments must name this node only (INVALID_REPLICA_ASSIGNMENT); ValidateOnly writes nothing;
 * new partitions start at leader epoch 0 and their logs are opened on first use. A topic named
 * twice fails with INVALID_REQUEST.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeCreatePartitionsRequest, type CreatePartitionsRequest } from '../../protocol/generated/messages/create-partitions-request.js';
import { encodeCreatePartitionsResponse, type CreatePartitionsResponseInput } from '../../protocol/generated/messages/create-partitions-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import { THROTTLING_QUOTA_EXCEEDED_MESSAGE } from '../../quota/broker-quotas.js';
import type { BrokerContext } from '../broker-context.js';

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
        if (t.assignments !== null) {
          if (t.assignments.length !== t.count - current || t.assignments.some((a) => a.brokerIds.length !== 1 || a.brokerIds[0] !== ctx.nodeId)) {
            results.push(out(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Assignments must name broker ${ctx.nodeId} once for each new partition.`));
            continue;
          }
        }
        if (req.validateOnly) {
          results.push(out(ErrorCode.NONE, null));
          continue;
        }
        if (!quota.tryRecord(t.count - current)) {
          results.push(out(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE));
          continue;
        }
        const res = await ctx.controller.createPartitions(t.name, t.count);
        results.push(out(res.errorCode, res.errorMessage));
      }
      return { throttleTimeMs: ctx.quotas.throttleMutations(rc, quota), results };
    },
  };
}
