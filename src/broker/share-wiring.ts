/**
 * Share groups on this node (KIP-932): the share group coordinator (membership and assignment)
 * and the share-partition manager (share sessions and delivery state of the partitions led
 * here), over the node's metadata image, logs and group configs.
 */
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { ShareGroupCoordinator } from '../share/share-group-coordinator.js';
import type { ShareStateInitializer } from '../share/share-group-model.js';
import { SharePartitionManager, type ShareLogs } from '../share/share-partition-manager.js';
import { ShareCoordinator } from '../share/share-coordinator.js';
import { ShareStateClient } from '../share/share-state-client.js';
import type { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { CONSUMER_OFFSETS, type GroupCoordinator } from '../coordinator/group-coordinator.js';
import type { BrokerContext } from './broker-context.js';
import { groupConfigDefault } from './group-configs.js';

export interface ShareGroups {
  readonly coordinator: ShareGroupCoordinator;
  readonly partitions: SharePartitionManager;
  /** The group's effective value of a GROUP config key (its override, else the broker's key). */
  groupConfig(groupId: string, key: string): string;
  readonly state: ShareCoordinator;
  /** The share coordinator as this node's share-partitions reach it (in-process or over the wire). */
  readonly persister: ShareStateClient;
  close(): Promise<void>;
}

export function createShareGroups(ctx: BrokerContext, host: CoordinatorHost, groups: GroupCoordinator): ShareGroups {
  /** The leader epoch at which this node serves each partition's share-partitions ("topicId:partition"). */
  const servedEpochs = new Map<string, number>();
  const groupConfig = (groupId: string, key: string): string =>
    ctx.image.otherConfigs.get(ConfigResourceType.GROUP)?.get(groupId)?.get(key) ?? groupConfigDefault(ctx.configs, key) ?? '';
  const logs: ShareLogs = {
    async resolve(topicId, partition) {
      const t = ctx.image.topicsById.get(topicId);
      if (t === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, log: null, leaderId: -1, leaderEpoch: -1 };
      // Share-partitions live on the partition leader, as fetches are served there.
      const found = await ctx.replicas.leaderLog(t, partition);
      if ('errorCode' in found) {
        const p = t.partitions[partition];
        return { errorCode: found.errorCode, log: null, leaderId: p?.leader ?? -1, leaderEpoch: p?.leaderEpoch ?? -1 };
      }
      const { log, part: p, leaderEpoch } = found;
      // Led here at a new epoch: what this node held from an earlier leadership is stale (other
      // leaders may have acknowledged since), so it is loaded again from the share coordinator.
      const served = servedEpochs.get(`${topicId}:${partition}`);
      if (served !== leaderEpoch) {
        if (served !== undefined) partitions.dropPartition(topicId, partition);
        servedEpochs.set(`${topicId}:${partition}`, leaderEpoch);
      }
      return { errorCode: ErrorCode.NONE, log, leaderId: p.leader, leaderEpoch };
    },
    groupConfig,
  };
  const state = new ShareCoordinator(host, ctx.config.int('share.coordinator.state.topic.num.partitions'));
  // This node's share-partitions keep their state with the share coordinator (__share_group_state):
  // in-process when this node leads the key's partition, else over the inter-broker connection.
  const persister = new ShareStateClient(state, {
    nodeId: ctx.nodeId,
    leadership: host.leadership,
    interBrokerSecurity: ctx.interBrokerSecurity,
    leaderEpochOf: (topicId, partition) => ctx.image.topicsById.get(topicId)?.partitions[partition]?.leaderEpoch ?? -1,
  });
  const partitions = new SharePartitionManager(logs, ctx.config.int('group.share.max.share.sessions'), persister);
  /**
   * The group coordinator's InitializeShareGroupState (Kafka's persisterInitialize). A
   * share-partition whose coordinator already holds a start offset keeps its state and counts as
   * initialized: AlterShareGroupOffsets or an earlier node (which initialized share-partitions on
   * first fetch only) set it, and starting it again at -1 would move it to share.auto.offset.reset.
   */
  const initializer: ShareStateInitializer = {
    async initialize(groupId, stateEpoch, parts) {
      const done = await Promise.all(
        parts.map(async (tp) => {
          try {
            if ((await persister.readSummary(groupId, tp.topicId, tp.partition)).startOffset >= 0) return tp;
            const code = await persister.initialize(groupId, tp.topicId, tp.partition, stateEpoch, -1);
            return code === ErrorCode.NONE || code === ErrorCode.FENCED_STATE_EPOCH ? tp : null;
          } catch (e) {
            ctx.log.warn('share-partition state not initialized', { groupId, topicId: tp.topicId, partition: tp.partition, error: (e as Error).message });
            return null;
          }
        }),
      );
      return done.filter((tp): tp is { topicId: string; partition: number } => tp !== null);
    },
  };
  const coordinator = new ShareGroupCoordinator(
    {
      topicId: (name) => ctx.image.topic(name)?.topicId,
      topicName: (id) => ctx.image.topicsById.get(id)?.name,
      partitionCount: (name) => ctx.image.topic(name)?.partitions.length,
    },
    {
      sessionTimeoutMs: (g) => Number(groupConfig(g, 'share.session.timeout.ms')),
      heartbeatIntervalMs: (g) => Number(groupConfig(g, 'share.heartbeat.interval.ms')),
      maxSize: ctx.config.int('group.share.max.size'),
    },
    (groupId, memberId) => partitions.sessions.closeMember(groupId, memberId),
    // Membership is kept with the group's coordinator shard in __consumer_offsets, as Kafka keeps share groups.
    {
      load: (groupId) => groups.runtime.read(groupId, (shard) => shard.share.get(groupId)),
      write: (groupId, records) => groups.runtime.write(groupId, () => ({ records, response: undefined })),
      epoch: (groupId) => host.leadership?.leaderEpoch(CONSUMER_OFFSETS, groups.runtime.partitionFor(groupId)) ?? 0,
    },
    initializer,
  );
  return {
    coordinator,
    partitions,
    groupConfig,
    state,
    persister,
    async close() {
      coordinator.close();
      partitions.close();
      persister.close();
      await state.close();
    },
  };
}
