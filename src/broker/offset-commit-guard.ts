/**
 * OffsetCommit for topics that do not exist is answered UNKNOWN_TOPIC_OR_PARTITION per partition
 * and those offsets are not stored, as Kafka's KafkaApis does before it reaches the group
 * coordinator (librdkafka's 0030 and 0081 tests check it). The group coordinator's handler is
 * wrapped here so only existing topics reach it; its answer is merged back in request order.
 */
import type { OffsetCommitRequest } from '../protocol/generated/messages/offset-commit-request.js';
import type { OffsetCommitResponseInput } from '../protocol/generated/messages/offset-commit-response.js';
import type { ApiHandler } from './api-handler.js';
import type { MetadataImage } from './metadata-image.js';

const UNKNOWN_TOPIC_OR_PARTITION = 3;

export function guardOffsetCommit(inner: ApiHandler, image: MetadataImage): ApiHandler {
  const h = inner as ApiHandler<OffsetCommitRequest, OffsetCommitResponseInput>;
  const guarded: ApiHandler<OffsetCommitRequest, OffsetCommitResponseInput> = {
    apiKey: h.apiKey,
    minVersion: h.minVersion,
    maxVersion: h.maxVersion,
    decode: h.decode,
    encode: h.encode,
    async handle(rc, req) {
      // v10+ names topics by id; the coordinator resolves those itself.
      if (rc.apiVersion >= 10) return h.handle(rc, req);
      const known = req.topics.filter((t) => image.topic(t.name) !== undefined);
      if (known.length === req.topics.length) return h.handle(rc, req);
      const res = known.length > 0 ? await h.handle(rc, { ...req, topics: known }) : { throttleTimeMs: 0, topics: [] };
      if (res === null) return null;
      const answered = [...(res.topics ?? [])];
      const topics = req.topics.map((t) => {
        if (image.topic(t.name) === undefined) {
          return { name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: UNKNOWN_TOPIC_OR_PARTITION })) };
        }
        const i = answered.findIndex((a) => a.name === t.name);
        return i >= 0 ? answered.splice(i, 1)[0]! : { name: t.name, partitions: [] };
      });
      return { ...res, topics };
    },
  };
  return guarded as unknown as ApiHandler;
}
