/**
 * The node's side of the coordinator seam (src/coordinator/coordinator-host.ts): config values,
 * clock and timers, topic lookups, and internal-topic partitions (`__consumer_offsets`, ...)
 * created on first use with cleanup.policy=compact and served as CoordinatorLogs.
 */
import {
  realTimers,
  systemClock,
  type CoordinatorHost,
  type CoordinatorLog,
} from '../coordinator/coordinator-host.js';
import { buildEndTxnMarkerBatch } from '../protocol/control-records.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { PartitionLog } from '../storage/partition-log.js';
import type { BrokerContext } from './broker-context.js';

/** A PartitionLog seen as a coordinator log: appends as leader at the partition's epoch, acks=all. */
export function coordinatorLogOf(ctx: BrokerContext, topic: string, partition: number, log: PartitionLog): CoordinatorLog {
  return {
    get logStartOffset() {
      return log.logStartOffset;
    },
    get logEndOffset() {
      return log.logEndOffset;
    },
    async append(batch) {
      const epoch = ctx.image.topic(topic)?.partitions[partition]?.leaderEpoch ?? 0;
      const r = await log.appendAsLeader(batch, epoch, { requiredAcks: -1, origin: 'coordinator' });
      return { errorCode: r.errorCode, baseOffset: r.baseOffset, lastOffset: r.lastOffset };
    },
    async readFrom(fetchOffset, maxBytes) {
      const r = await log.readToBuffer({ fetchOffset, maxOffset: log.logEndOffset, maxBytes, minOneMessage: true });
      return r.records;
    },
  };
}

export function createCoordinatorHost(ctx: BrokerContext): CoordinatorHost {
  const internalCreates = new Map<string, Promise<void>>();
  const ensureInternalTopic = (topic: string, partitions: number): Promise<void> => {
    if (ctx.image.topic(topic)) return Promise.resolve();
    let p = internalCreates.get(topic);
    if (!p) {
      p = ctx.controller
        .createTopic(topic, partitions, new Map([['cleanup.policy', 'compact'], ['segment.bytes', '104857600'], ['compression.type', 'producer']]))
        .then((res) => {
          if (res.errorCode !== 0 && !ctx.image.topic(topic)) throw new Error(`cannot create ${topic}: ${res.errorMessage ?? res.errorCode}`);
          ctx.log.info('created internal topic', { topic, partitions });
        })
        .finally(() => internalCreates.delete(topic));
      internalCreates.set(topic, p);
    }
    return p;
  };
  return {
    nodeId: ctx.nodeId,
    get host() {
      return ctx.host;
    },
    get port() {
      return ctx.port;
    },
    clock: systemClock,
    timers: realTimers,
    config: (key) => ctx.configs.brokerValue(key) ?? ctx.config.get(key),
    async openInternalPartition(topic, partition, partitions) {
      await ensureInternalTopic(topic, partitions);
      const log = await ctx.replicas.ensureLog(topic, partition);
      if (!log) throw new Error(`internal partition ${topic}-${partition} is not available`);
      return coordinatorLogOf(ctx, topic, partition, log);
    },
    topicIdByName: (name) => ctx.image.topic(name)?.topicId,
    topicNameById: (id) => ctx.image.topicsById.get(id)?.name,
    partitionCount: (topic) => ctx.image.topic(topic)?.partitions.length,
    topicNames: () => [...ctx.image.topicsByName.keys()],
    allocateProducerId: () => ctx.producerIds.nextId(),
    async writeTxnMarker(topic, partition, marker) {
      const part = ctx.image.topic(topic)?.partitions[partition];
      const log = part ? await ctx.replicas.ensureLog(topic, partition) : undefined;
      if (!part || !log) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      // A replicated partition takes a marker only on its leader: written into a follower's copy
      // it would fork that copy from the leader's log.
      const replication = ctx.replicas.replication;
      if (replication !== null && log.isReplicated && replication.leaderOf(ctx.image.topic(topic)?.topicId ?? '', partition) === undefined) {
        return ErrorCode.NOT_LEADER_OR_FOLLOWER;
      }
      const batch = buildEndTxnMarkerBatch({
        producerId: marker.producerId,
        producerEpoch: marker.producerEpoch,
        coordinatorEpoch: marker.coordinatorEpoch,
        commit: marker.commit,
      });
      const r = await log.appendAsLeader(batch, part.leaderEpoch, { requiredAcks: -1, origin: 'coordinator', coordinatorEpoch: marker.coordinatorEpoch });
      return r.errorCode;
    },
    onMetadataChange: (cb) => ctx.controller.onChange(() => cb()),
  };
}
