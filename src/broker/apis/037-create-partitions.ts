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
 *
 * As Kafka's ReplicationControlManager.createPartitions, every topic is checked on its own first,
 * and only then are the ones that passed created. A topic that passes adds one metadata record
 * per new partition to a list bounded at 10,000 (MAX_RECORDS_PER_USER_OP); the topic that would
 * take it past the bound fails alone, with UNKNOWN_SERVER_ERROR (Kafka catches the bounded list's
 * exception per topic), and a topic that fails its own checks adds nothing. Kafka checks the
 * topics in the order of a hash set of their names; Fjord in request order.
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
/** A topic that passed every check, to be given its partitions once the whole request has been checked. */
interface Planned {
  readonly planned: true;
  readonly name: string;
  readonly count: number;
  readonly assignment: number[][] | undefined;
}

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
      // KIP-599: v3+ refuse new partitions over controller_mutation_rate, older versions are only throttled.
      const quota = ctx.quotas.mutationQuota(rc, rc.apiVersion >= 3);
      // First every topic is checked; then the ones that passed are created, in request order.
      const checked: (Result | Planned)[] = [];
      let records = 0;
      for (const t of req.topics) {
        const out = (errorCode: number, errorMessage: string | null): Result => ({ name: t.name, errorCode, errorMessage });
        if ((counts.get(t.name) ?? 0) > 1) {
          checked.push(out(ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'));
          continue;
        }
        const topic = ctx.image.topic(t.name);
        if (!topic) {
          checked.push(out(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${t.name}' does not exist.`));
          continue;
        }
        // A mirrored topic's partitions follow the source's (the mirror adds them itself).
        if (topic.mirror !== null && topic.mirror.desiredState !== MirrorPartitionState.STOPPED) {
          checked.push(out(ErrorCode.READ_ONLY_TOPIC, `Topic ${t.name} is mirrored by ${topic.mirror.mirrorName}; its partitions follow the source topic's.`));
          continue;
        }
        const current = topic.partitions.length;
        if (t.count <= current) {
          checked.push(
            out(
              ErrorCode.INVALID_PARTITIONS,
              t.count === current ? `Topic already has ${current} partitions.` : `The topic ${t.name} currently has ${current} partition(s); ${t.count} would not be an increase.`,
            ),
          );
          continue;
        }
        const added = t.count - current;
        const assignment = t.assignments?.map((a) => a.brokerIds);
        if (assignment && assignment.length !== added) {
          checked.push(out(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Attempted to add ${added} additional partition(s), but only ${assignment.length} assignment(s) were specified.`));
          continue;
        }
        // A topic that would pass the bound is placed for one partition only: whether its replicas
        // can be placed does not depend on the count, and a count such as 2^31 - 1 is never laid out.
        const crosses = records + added > MAX_RECORDS_PER_USER_OP;
        const placed = ctx.controller.placement(t.name, current, crosses && !assignment ? 1 : added, assignment ? { assignment } : { replicationFactor: topic.partitions[0]?.replicas.length ?? 1 });
        if (!Array.isArray(placed)) {
          checked.push(out(placed.errorCode, placed.errorMessage));
          continue;
        }
        if (!req.validateOnly && !quota.tryRecord(added)) {
          checked.push(out(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE));
          continue;
        }
        if (crosses) {
          checked.push(out(ErrorCode.UNKNOWN_SERVER_ERROR, EXCESSIVE_BATCH_MESSAGE));
          continue;
        }
        records += added;
        checked.push({ planned: true, name: t.name, count: t.count, assignment });
      }
      const results: Result[] = [];
      for (const r of checked) {
        if (!('planned' in r)) results.push(r);
        else if (req.validateOnly) results.push({ name: r.name, errorCode: ErrorCode.NONE, errorMessage: null });
        else {
          const res = await ctx.controller.createPartitions(r.name, r.count, r.assignment);
          results.push({ name: r.name, errorCode: res.errorCode, errorMessage: res.errorMessage });
        }
      }
      return { throttleTimeMs: ctx.quotas.throttleMutations(rc, quota), results };
    },
  };
}
