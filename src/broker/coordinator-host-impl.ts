/**
 * The node's side of the coordinator seam (src/coordinator/coordinator-host.ts): config values,
 * clock and timers, topic lookups, and internal-topic partitions (`__consumer_offsets`, ...)
 * created on first use with cleanup.policy=compact and served as CoordinatorLogs.
 */
import { realTimers, systemClock } from '../common/time.js';
import { type CoordinatorHost, type CoordinatorLeadership } from '../coordinator/coordinator-host.js';
import { coordinatorLogOf } from '../coordinator/partition-log-adapter.js';
import type { PartitionLeader } from '../replication/partition-leader.js';
import { buildEndTxnMarkerBatch } from '../protocol/control-records.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { BrokerContext } from './broker-context.js';
import { TxnMarkerChannel } from './txn-marker-channel.js';
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { groupConfigDefault } from './group-configs.js';
import { MirrorPartitionState } from '../mirror/mirror-partition-state.js';

/**
 * The leader state of a replicated internal partition when this node may append to it; null when
 * it leads it alone (the single-node path); 'not-leader' when it must not write (Kafka's
 * Partition.appendRecordsToLeader check).
 */
export function appendLeader(ctx: BrokerContext, topic: string, partition: number): PartitionLeader | null | 'not-leader' {
  const led = ctx.replicas.leadership(ctx.image.topic(topic), partition, true);
  return typeof led === 'number' ? 'not-leader' : (led.leader ?? null);
}

/** How long a coordinator write waits for the ISR (offsets.commit.timeout.ms, Kafka's default 5 s). */
export function commitTimeoutMs(ctx: BrokerContext): number {
  return Number(ctx.configs.brokerValue('offsets.commit.timeout.ms') ?? ctx.config.get('offsets.commit.timeout.ms') ?? 5000);
}

/**
 * A mirror topic takes no client writes until it is stopped (KIP-1279 read-only guard): false
 * while the topic is bound to a mirror and its desired state is not STOPPED. This is what a
 * node that does not lead the partition can know (a transaction or group coordinator adding it
 * to a transaction); the leader's own guard (`clientWriteError`) also waits for the persisted
 * STOPPED before it takes data or markers.
 */
function mirrorTopicWritable(ctx: BrokerContext, topic: string): boolean {
  const t = ctx.image.topic(topic);
  return t === undefined || t.mirror === null || t.mirror.desiredState === MirrorPartitionState.STOPPED;
}

/**
 * The error of a client write to a partition this node leads, 0 when allowed: READ_ONLY_TOPIC
 * while its topic is mirrored; NOT_LEADER_OR_FOLLOWER (retriable: a transaction coordinator
 * sends its marker again) once it is being stopped, until this leader holds its persisted STOPPED.
 */
export function clientWriteError(ctx: BrokerContext, topic: string, partition: number): number {
  if (!mirrorTopicWritable(ctx, topic)) return ErrorCode.READ_ONLY_TOPIC;
  const t = ctx.image.topic(topic);
  if (t === undefined || t.mirror === null || t.partitions[partition]?.leader !== ctx.nodeId) return ErrorCode.NONE;
  const guard = ctx.produceGuard;
  if (guard === null) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
  return guard.produceError?.(topic, partition) ?? (guard.isProduceAllowed(topic, partition) ? ErrorCode.NONE : ErrorCode.READ_ONLY_TOPIC);
}

export function createCoordinatorHost(ctx: BrokerContext): CoordinatorHost & { close(): void } {
  const markers = new TxnMarkerChannel(ctx);
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
    ...(ctx.cluster.distributed ? { leadership: leadershipOf(ctx, (topic, partitions) => ensureInternalTopic(topic, partitions).catch((err: unknown) => ctx.log.warn('creating internal topic failed', { topic, err: String(err) }))) } : {}),
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
      return coordinatorLogOf(log, {
        leader: () => appendLeader(ctx, topic, partition),
        epoch: () => ctx.image.topic(topic)?.partitions[partition]?.leaderEpoch ?? 0,
        commitTimeoutMs: () => commitTimeoutMs(ctx),
      });
    },
    groupConfig: (groupId, key) => ctx.image.otherConfigs.get(ConfigResourceType.GROUP)?.get(groupId)?.get(key) ?? groupConfigDefault(ctx.configs, key) ?? undefined,
    async createStreamsTopic(name, partitions, replicationFactor, configs) {
      if (ctx.image.topic(name)) return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `Topic '${name}' already exists.` };
      const rf = replicationFactor > 0 ? replicationFactor : Number(ctx.configs.brokerValue('default.replication.factor') ?? 1);
      const placed = ctx.controller.placement(name, 0, partitions, { replicationFactor: rf });
      if (!Array.isArray(placed)) return { errorCode: placed.errorCode, errorMessage: placed.errorMessage ?? null };
      const res = await ctx.controller.createTopic(name, partitions, new Map(configs), undefined, { replicationFactor: rf });
      if (res.errorCode === 0) ctx.log.info('created streams internal topic', { topic: name, partitions });
      return { errorCode: res.errorCode, errorMessage: res.errorMessage ?? null };
    },
    topicIdByName: (name) => ctx.image.topic(name)?.topicId,
    topicNameById: (id) => ctx.image.topicsById.get(id)?.name,
    partitionCount: (topic) => ctx.image.topic(topic)?.partitions.length,
    topicNames: () => [...ctx.image.topicsByName.keys()],
    allocateProducerId: () => ctx.producerIds.nextId(),
    acceptsClientWrites: (topic) => mirrorTopicWritable(ctx, topic),
    async writeTxnMarker(topic, partition, marker, opts = {}) {
      const part = ctx.image.topic(topic)?.partitions[partition];
      if (!part) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      // A partition led by another node gets its marker through that leader (WriteTxnMarkers).
      if (ctx.cluster.distributed && part.leader !== ctx.nodeId) {
        if (opts.forward === false || part.leader < 0) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
        return markers.send(part.leader, topic, partition, marker);
      }
      // __consumer_offsets takes markers only through the group coordinator, which applies them.
      if (topic === '__consumer_offsets') return ErrorCode.NOT_COORDINATOR;
      // A mirrored log holds the source's transactions only: a client transaction's marker would
      // put a destination epoch and a producer the source never had into it. STOPPING writes its
      // own ABORT markers through the mirror coordinator, not here.
      const refused = clientWriteError(ctx, topic, partition);
      if (refused !== ErrorCode.NONE) return refused;
      // A replicated partition takes a marker only on its leader: written into a follower's copy
      // it would fork that copy from the leader's log.
      const found = await ctx.replicas.leaderLog(ctx.image.topic(topic), partition, { forAppend: true });
      if ('errorCode' in found) return found.errorCode;
      const { log, leader, leaderEpoch } = found;
      const batch = buildEndTxnMarkerBatch({
        producerId: marker.producerId,
        producerEpoch: marker.producerEpoch,
        coordinatorEpoch: marker.coordinatorEpoch,
        commit: marker.commit,
      });
      const r = await log.appendAsLeader(batch, leaderEpoch, { requiredAcks: -1, origin: 'coordinator', coordinatorEpoch: marker.coordinatorEpoch });
      // The transaction completes only once its markers are on the ISR (Kafka appends them with acks=-1).
      if (r.errorCode !== 0 || leader === undefined) return r.errorCode;
      return leader.awaitReplication(r.lastOffset + 1, commitTimeoutMs(ctx));
    },
    close: () => markers.close(),
    onMetadataChange: (cb) => ctx.controller.onChange(() => cb()),
  };
}

/**
 * Which internal partitions this node serves on a cluster: those it leads unfenced, once
 * replication has taken the leader role at the image's epoch. Leaders are told apart from the
 * metadata image; their client endpoints come from the broker registrations.
 */
function leadershipOf(ctx: BrokerContext, ensureTopic: (topic: string, partitions: number) => void): CoordinatorLeadership {
  return {
    leads: (topic, partition) => {
      if (ctx.replicas.getLog(topic, partition) === undefined) return false;
      const leader = appendLeader(ctx, topic, partition);
      return leader !== 'not-leader';
    },
    leaderEndpoint: (topic, partition, listenerName) => {
      const part = ctx.image.topic(topic)?.partitions[partition];
      if (part === undefined || part.leader < 0) return null;
      if (part.leader === ctx.nodeId) return ctx.cluster.fenced ? null : { nodeId: ctx.nodeId, host: ctx.host, port: ctx.port };
      const b = ctx.cluster.liveBrokers().find((x) => x.nodeId === part.leader);
      if (b === undefined) return null;
      const ep = (listenerName !== undefined ? b.endpoints.find((e) => e.name === listenerName) : undefined) ?? { host: b.host, port: b.port };
      return { nodeId: b.nodeId, host: ep.host, port: ep.port };
    },
    leaderEpoch: (topic, partition) => ctx.image.topic(topic)?.partitions[partition]?.leaderEpoch ?? -1,
    ensureTopic: (topic, partitions) => {
      if (ctx.image.topic(topic) === undefined) ensureTopic(topic, partitions);
    },
    onChange: (cb) => {
      const offs = [ctx.controller.onChange(() => cb()), ctx.cluster.on('fenced', cb), ctx.cluster.on('unfenced', cb), ctx.cluster.on('brokers', cb)];
      return () => offs.forEach((off) => off());
    },
  };
}
