import type { ApiHandler } from '../server/api-handler.js';
import { decodeOffsetCommitRequest } from '../protocol/generated/messages/offset-commit-request.js';
import type { OffsetCommitRequest } from '../protocol/generated/messages/offset-commit-request.js';
import { encodeOffsetCommitResponse } from '../protocol/generated/messages/offset-commit-response.js';
import type { OffsetCommitResponseInput } from '../protocol/generated/messages/offset-commit-response.js';
import { decodeOffsetFetchRequest } from '../protocol/generated/messages/offset-fetch-request.js';
import type { OffsetFetchRequest } from '../protocol/generated/messages/offset-fetch-request.js';
import { encodeOffsetFetchResponse } from '../protocol/generated/messages/offset-fetch-response.js';
import type { OffsetFetchResponseInput } from '../protocol/generated/messages/offset-fetch-response.js';
import type { CoordinatorHost } from './coordinator-host.js';
import type { GroupCoordinator } from './group-coordinator.js';
import type { FetchGroupResult } from './group-shard.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { ErrorCode } from '../protocol/generated/errors.js';

/**
 * OffsetCommit and OffsetFetch, the group coordinator's offset APIs. Offsets are stored by topic
 * name whatever version wrote them, so v10 (topics by id, KIP-848's follow-up in Kafka 4.4) and
 * v9 and older read each other's commits: a v10 id is resolved to its name before the group
 * coordinator sees it, and names are turned back into ids for a v10 answer.
 */

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

type OffsetFetchTopicOut = NonNullable<NonNullable<OffsetFetchResponseInput['groups']>[number]['topics']>[number];
interface OffsetCommitTopicOut {
  readonly topicId?: string;
  readonly name: string;
  readonly partitions: { partitionIndex: number; errorCode: number }[];
}

/** An OffsetCommit answer with one entry per topic (per topic id at v10), in the order topics are first added. */
class CommitAnswer {
  readonly topics: OffsetCommitTopicOut[] = [];
  private readonly byKey = new Map<string, OffsetCommitTopicOut>();

  constructor(private readonly byId: boolean) {}

  /** The topic's entry, added (with no partitions yet) if it has none. */
  topic(topicId: string, name: string): OffsetCommitTopicOut {
    const key = this.byId ? topicId : name;
    let t = this.byKey.get(key);
    if (t === undefined) {
      t = { ...(this.byId ? { topicId } : {}), name, partitions: [] };
      this.byKey.set(key, t);
      this.topics.push(t);
    }
    return t;
  }

  add(topicId: string, name: string, partitionIndex: number, errorCode: number): void {
    this.topic(topicId, name).partitions.push({ partitionIndex, errorCode });
  }
}

export function offsetApiHandlers(host: CoordinatorHost, gc: GroupCoordinator): ApiHandler[] {
  /*
   * OffsetCommit v2-10. Generation -1 with an empty member id is an admin / simple-consumer
   * commit (only while the group is empty); v6+ committed leader epoch; v7+ instance id; v9 the
   * member epoch of a KIP-848 member; v10 topics by id, an id this node does not know answering
   * UNKNOWN_TOPIC_ID for its partitions (Kafka's KafkaApis.handleOffsetCommitRequest resolves
   * ids through the metadata cache first).
   * A partition of a topic that does not exist (or an index past its partition count) answers
   * UNKNOWN_TOPIC_OR_PARTITION and is not stored, as Kafka checks before its group coordinator.
   * The answer is built as Kafka's OffsetCommitResponse.Builder builds it: the partitions refused
   * before the coordinator go under one entry per topic (a topic named twice is answered once),
   * in the order they were met; the coordinator answers each request entry it was given, and its
   * answer is kept as it is when nothing was refused, or else joined to those entries by topic.
   */
  const offsetCommit: ApiHandler<OffsetCommitRequest, OffsetCommitResponseInput> = {
    apiKey: 8, minVersion: 2, maxVersion: 10, decode: decodeOffsetCommitRequest, encode: encodeOffsetCommitResponse,
    async handle(ctx, req) {
      const v = ctx.apiVersion;
      const byId = v >= 10;
      const refused = new CommitAnswer(byId);
      // The entries the coordinator is asked to commit, one per request entry with a partition that exists.
      const toCommit: { topicId: string; name: string; partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[] }[] = [];
      for (const t of req.topics) {
        // The name a topic is stored under; null for an id this node does not know.
        const name = byId ? (t.topicId === ZERO_UUID ? null : (host.topicNameById(t.topicId) ?? null)) : t.name;
        const topicId = byId ? t.topicId : ZERO_UUID;
        // A topic that does not exist is answered even when it names no partition, as Kafka's
        // builder adds its entry before its partitions; one that exists only with its partitions.
        if (name === null) {
          refused.topic(topicId, '');
          for (const p of t.partitions) refused.add(topicId, '', p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_ID);
          continue;
        }
        const count = host.partitionCount(name);
        if (count === undefined) refused.topic(topicId, name);
        const valid = [];
        for (const p of t.partitions) {
          if (count !== undefined && p.partitionIndex >= 0 && p.partitionIndex < count) {
            valid.push({ partitionIndex: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1, committedMetadata: p.committedMetadata });
          } else {
            refused.add(topicId, name, p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          }
        }
        if (valid.length > 0) toCommit.push({ topicId, name, partitions: valid });
      }
      if (toCommit.length === 0) return { topics: refused.topics };
      let answered: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];
      try {
        answered = await gc.commitOffsets({ groupId: req.groupId, generationIdOrMemberEpoch: req.generationIdOrMemberEpoch, memberId: req.memberId, groupInstanceId: v >= 7 ? req.groupInstanceId : null, topics: toCommit, apiVersion: v });
      } catch (e) {
        const code = errorCodeOf(e);
        answered = toCommit.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) }));
      }
      // The coordinator answers its entries in the order it was given them.
      const committed = toCommit.map((t, i) => ({ ...(byId ? { topicId: t.topicId } : {}), name: t.name, partitions: answered[i]?.partitions ?? t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR })) }));
      if (refused.topics.length === 0) return { topics: committed };
      for (const t of committed) for (const p of t.partitions) refused.add(t.topicId ?? ZERO_UUID, t.name, p.partitionIndex, p.errorCode);
      return { topics: refused.topics };
    },
  };

  /*
   * OffsetFetch v1-10. Offset -1 where nothing is committed; topics null (v2+) = all; v2+ a
   * top-level error; v5+ leader epoch; v7 RequireStable (UNSTABLE_OFFSET_COMMIT for partitions
   * with transactional offsets still pending); v8+ many groups; v9 member id/epoch for KIP-848;
   * v10 topics by id: an unknown id answers UNKNOWN_TOPIC_ID for its partitions, and a fetch of
   * every topic leaves out offsets of topics that no longer exist (no id to name them by).
   */
  const offsetFetch: ApiHandler<OffsetFetchRequest, OffsetFetchResponseInput> = {
    apiKey: 9, minVersion: 1, maxVersion: 10, decode: decodeOffsetFetchRequest, encode: encodeOffsetFetchResponse,
    async handle(ctx, req) {
      const v = ctx.apiVersion;
      const requireStable = v >= 7 && req.requireStable;
      const fetchOne = async (groupId: string, topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null, memberId: string | null, memberEpoch: number): Promise<FetchGroupResult> => {
        try {
          return await gc.fetchOffsets(groupId, topics, memberId, memberEpoch, requireStable);
        } catch (e) {
          return { errorCode: errorCodeOf(e), topics: [] };
        }
      };
      if (v >= 8) {
        const byId = v >= 10;
        const groups = await Promise.all(
          req.groups.map(async (g) => {
            const asked = g.topics === null ? null : g.topics.map((t) => ({ ...t, name: byId ? (t.topicId === ZERO_UUID ? null : (host.topicNameById(t.topicId) ?? null)) : t.name }));
            const resolved = asked === null ? null : asked.flatMap((t) => (t.name === null ? [] : [{ name: t.name, partitionIndexes: t.partitionIndexes }]));
            const r = await fetchOne(g.groupId, resolved, v >= 9 ? g.memberId : null, v >= 9 ? g.memberEpoch : -1);
            const found = new Map(r.topics.map((t) => [t.name, t]));
            const partitions = (t: FetchGroupResult['topics'][number]) =>
              t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: p.committedLeaderEpoch, metadata: p.metadata, errorCode: p.errorCode }));
            let topics: OffsetFetchTopicOut[];
            if (!byId) topics = r.topics.map((t) => ({ name: t.name, partitions: partitions(t) }));
            else if (asked === null) {
              topics = r.topics.flatMap((t) => {
                const topicId = host.topicIdByName(t.name);
                return topicId === undefined ? [] : [{ name: t.name, topicId, partitions: partitions(t) }];
              });
            } else if (r.errorCode !== ErrorCode.NONE) topics = [];
            else {
              topics = asked.map((t) => {
                const hit = t.name === null ? undefined : found.get(t.name);
                if (hit !== undefined) return { name: hit.name, topicId: t.topicId, partitions: partitions(hit) };
                const unknown = t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNKNOWN_TOPIC_ID }));
                return { name: '', topicId: t.topicId, partitions: unknown };
              });
            }
            return { groupId: g.groupId, errorCode: r.errorCode, topics };
          }),
        );
        return { groups };
      }
      const r = await fetchOne(req.groupId, v >= 2 ? req.topics : (req.topics ?? []), null, -1);
      return {
        ...(v >= 2 ? { errorCode: r.errorCode } : {}),
        topics: r.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            committedOffset: p.committedOffset,
            ...(v >= 5 ? { committedLeaderEpoch: p.committedLeaderEpoch } : {}),
            metadata: p.metadata,
            errorCode: v < 2 && r.errorCode !== ErrorCode.NONE ? r.errorCode : p.errorCode,
          })),
        })),
      };
    },
  };

  return [offsetCommit, offsetFetch];
}
