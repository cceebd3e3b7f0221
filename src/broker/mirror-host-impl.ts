/**
 * The node's side of the mirroring seam (src/mirror/mirror-host.ts): the coordinator host plus
 * partition logs, leader epochs, mirror bindings and CLUSTER_MIRROR configs from the metadata
 * image, and atomic controller writes of mirroring's metadata records.
 */
import type { CoordinatorHost } from '../coordinator/coordinator-host.js';
import type { MirrorLog } from '../fetcher/mirror-log.js';
import type { MirrorControllerOp, MirrorHost, MirrorTopicBinding, OpenTransaction } from '../mirror/mirror-host.js';
import { MirrorPartitionState, type MirrorPartitionStateValue } from '../mirror/mirror-partition-state.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { BrokerContext } from './broker-context.js';
import { checkTopicConfig } from './config.js';
import { commitTimeoutMs } from './coordinator-host-impl.js';
import { isReplicated } from '../replication/replication-manager.js';
import { topicNameError, type Controller, type ControllerResult } from '../controller/controller.js';
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { type MetadataImage, type TopicImage } from '../controller/metadata-image.js';
import { validateMirrorOps, type MirrorImageView } from '../mirror/desired-state-rules.js';
import type { MetadataRecord } from '../controller/metadata-records.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

function bindingOf(t: TopicImage): MirrorTopicBinding | undefined {
  if (!t.mirror) return undefined;
  return {
    topicName: t.name,
    topicId: t.topicId,
    mirrorName: t.mirror.mirrorName,
    desiredState: t.mirror.desiredState as MirrorPartitionStateValue,
    lastStateChangeOffset: t.mirror.lastStateChangeOffset,
  };
}

/** The metadata image as the desired-state rules read it. */
function mirrorImageView(img: MetadataImage): MirrorImageView {
  return {
    topicById(topicId) {
      const t = img.topicsById.get(topicId);
      return t === undefined ? undefined : { name: t.name, binding: bindingOf(t) };
    },
    mirrorExists: (name) => img.otherConfigs.get(ConfigResourceType.CLUSTER_MIRROR)?.has(name) ?? false,
    mirrorConfig: (name) => img.otherConfigs.get(ConfigResourceType.CLUSTER_MIRROR)?.get(name),
    boundTopicIds(mirrorName) {
      const out: string[] = [];
      for (const t of img.topicsById.values()) if (t.mirror?.mirrorName === mirrorName) out.push(t.topicId);
      return out;
    },
  };
}

/**
 * The build step of a mirroring controller write: the records of `ops` against `img`, or the
 * refusal. The controller runs it against the image at the log's head, and again after every
 * lost compare-and-swap, so every check here holds for the image the records land on.
 */
export function buildMirrorRecords(controller: Pick<Controller, 'topicRecords'>, img: MetadataImage, ops: readonly MirrorControllerOp[]): MetadataRecord[] | ControllerResult {
  const checked = validateMirrorOps(mirrorImageView(img), ops);
  if (!Array.isArray(checked)) return { errorCode: checked.code, errorMessage: checked.msg, metadataOffset: -1 };
  const recs: MetadataRecord[] = [];
  const newNames = new Set<string>();
  const newIds = new Set<string>();
  for (const op of checked) {
    switch (op.type) {
      case 'createTopic': {
        const err = topicNameError(op.name);
        if (err) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: err, metadataOffset: -1 };
        if (img.topicsByName.has(op.name) || newNames.has(op.name)) {
          return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `Topic '${op.name}' already exists.`, metadataOffset: -1 };
        }
        if (op.topicId === ZERO_UUID || img.topicsById.has(op.topicId) || newIds.has(op.topicId)) {
          return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `Topic id ${op.topicId} already exists.`, metadataOffset: -1 };
        }
        if (op.numPartitions < 1) return { errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: 'Number of partitions must be larger than 0.', metadataOffset: -1 };
        newNames.add(op.name);
        newIds.add(op.topicId);
        recs.push(...controller.topicRecords(op.name, op.topicId, op.numPartitions, op.configs));
        break;
      }
      case 'mirrorTopicState':
        if (!img.topicsById.has(op.topicId) && !newIds.has(op.topicId)) {
          return { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: `Unknown topic id ${op.topicId}`, metadataOffset: -1 };
        }
        recs.push({ type: 'mirrorTopicState', topicId: op.topicId, mirrorName: op.mirrorName, desiredState: op.desiredState });
        break;
      case 'mirrorEmptiedOf':
      case 'mirrorTopicLists':
        break;
      case 'mirrorConfig':
        recs.push({ type: 'config', resourceType: ConfigResourceType.CLUSTER_MIRROR, resourceName: op.mirrorName, name: op.name, value: op.value });
        break;
      case 'bumpLeaderEpoch': {
        const t = img.topicsById.get(op.topicId);
        const p = t?.partitions[op.partition];
        if (!p) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unknown partition', metadataOffset: -1 };
        // Decided as the records are applied, so no stop can slip in between check and bump.
        if (op.whileMirrored === true && t?.mirror?.desiredState === MirrorPartitionState.STOPPED) {
          return { errorCode: ErrorCode.MIRROR_TOPIC_BEING_STOPPED, errorMessage: `${t.name} is being stopped; only STOPPING bumps its epoch`, metadataOffset: -1 };
        }
        if (op.leaderEpoch > p.leaderEpoch) recs.push({ type: 'partitionChange', topicId: op.topicId, partition: op.partition, leaderEpoch: op.leaderEpoch });
        break;
      }
    }
  }
  return recs;
}

export function createMirrorHost(ctx: BrokerContext, coordinatorHost: CoordinatorHost): MirrorHost {
  const logOf = (topic: string, partition: number): MirrorLog | undefined => {
    const l = ctx.replicas.getLog(topic, partition);
    if (!l && ctx.image.topic(topic)?.partitions[partition]) void ctx.replicas.ensureLog(topic, partition);
    return l;
  };
  return {
    ...coordinatorHost,
    // Getters of the coordinator host do not survive a spread: restate them.
    get host() {
      return ctx.host;
    },
    get port() {
      return ctx.port;
    },
    clusterId: ctx.clusterId,
    interBrokerSecurity: ctx.interBrokerSecurity,
    metadataOffset: () => ctx.image.offset,
    topicNames: () => [...ctx.image.topicsByName.keys()],
    leaderEpoch: (topic, partition) => ctx.image.topic(topic)?.partitions[partition]?.leaderEpoch,
    isLocalLeader: (topic, partition) => ctx.image.topic(topic)?.partitions[partition]?.leader === ctx.nodeId,
    partitionLog: logOf,
    openPartitionLog: (topic, partition) => ctx.replicas.ensureLog(topic, partition),
    replicaProgress(topic, partition) {
      const t = ctx.image.topic(topic);
      const part = t?.partitions[partition];
      const replication = ctx.replicas.replication;
      if (t === undefined || part === undefined || replication === null || !isReplicated(part, ctx.nodeId)) return undefined;
      const leader = replication.leaderOf(t.topicId, partition);
      const followerLogEnds = new Map<number, number>();
      for (const id of part.replicas) if (id !== ctx.nodeId) followerLogEnds.set(id, leader?.followers.get(id)?.logEndOffset ?? -1);
      return {
        replicas: part.replicas,
        isr: part.isr,
        minInsyncReplicas: ctx.configs.minInsyncReplicas(topic),
        followerLogEnds,
        supportUncleanLeaderElection: (t.configs.get('mirror.support.unclean.leader.election') ?? 'false') === 'true',
      };
    },
    openTransactions(topic, partition): readonly OpenTransaction[] {
      const l = ctx.replicas.getLog(topic, partition);
      if (!l) return [];
      return l
        .producerStates()
        .filter((s) => s.currentTxnStartOffset >= 0)
        .map((s) => ({ producerId: s.producerId, producerEpoch: s.producerEpoch, coordinatorEpoch: Math.max(0, s.coordinatorEpoch) }));
    },
    async appendCoordinatorBatch(topic, partition, batch) {
      const found = await ctx.replicas.leaderLog(ctx.image.topic(topic), partition, { forAppend: true });
      if ('errorCode' in found) return { errorCode: found.errorCode, baseOffset: -1, lastOffset: -1 };
      const { log: l, leader, leaderEpoch } = found;
      const r = await l.appendAsLeader(batch, leaderEpoch, { requiredAcks: -1, origin: 'coordinator' });
      if (r.errorCode !== 0 || leader === undefined) return { errorCode: r.errorCode, baseOffset: r.baseOffset, lastOffset: r.lastOffset, ...(r.errorMessage !== undefined ? { errorMessage: r.errorMessage } : {}) };
      // acks=all, as a coordinator's append: the marker is committed (the ISR holds it) before
      // STOPPING goes on, so a leader elected after STOPPED is persisted holds it too. The wait
      // outlasts the time the leader takes to drop a replica that stopped fetching from the ISR
      // (replica.lag.time.max.ms, looked at every half of it, so at most one and a half of it):
      // giving up sooner fails the stop and appends the marker again on its retry, where waiting
      // a little longer would have seen it committed.
      const code = await leader.awaitReplication(r.lastOffset + 1, commitTimeoutMs(ctx) + Math.ceil(1.5 * ctx.config.int('replica.lag.time.max.ms')));
      return { errorCode: code, baseOffset: r.baseOffset, lastOffset: r.lastOffset };
    },
    mirrorTopicBindings(): readonly MirrorTopicBinding[] {
      const out: MirrorTopicBinding[] = [];
      for (const t of ctx.image.topicsByName.values()) {
        const b = bindingOf(t);
        if (b) out.push(b);
      }
      return out;
    },
    mirrorTopicBinding(topic) {
      const t = ctx.image.topic(topic);
      return t ? bindingOf(t) : undefined;
    },
    mirrorConfigs: () => ctx.image.otherConfigs.get(ConfigResourceType.CLUSTER_MIRROR) ?? new Map(),
    async alterMirrorTopicConfigs(topic, changes) {
      if (ctx.image.topic(topic) === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic ${topic} does not exist.` };
      for (const [name, value] of changes) {
        const err = checkTopicConfig(name, value);
        if (err) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: err };
      }
      const r = await ctx.controller.alterConfigs(ConfigResourceType.TOPIC, topic, changes);
      return { errorCode: r.errorCode, errorMessage: r.errorMessage };
    },
    async createMirrorPartitions(topic, newTotal) {
      const r = await ctx.controller.createPartitions(topic, newTotal);
      return { errorCode: r.errorCode, errorMessage: r.errorMessage };
    },
    async controllerWrite(ops: readonly MirrorControllerOp[]) {
      const res: ControllerResult = await ctx.controller.write((img) => buildMirrorRecords(ctx.controller, img, ops));
      return { errorCode: res.errorCode, ...(res.errorMessage !== null ? { errorMessage: res.errorMessage } : {}), metadataOffset: res.metadataOffset };
    },
  };
}
