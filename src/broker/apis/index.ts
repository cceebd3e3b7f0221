/**
 * Every API the broker itself serves (group, transaction and mirror APIs come from their
 * modules and are registered beside these in node.ts). InitProducerId is the transaction
 * coordinator's: it serves idempotent producers (a null transactional id) as well.
 */
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { FetchManager } from '../fetch-manager.js';
import type { MirrorConfigDescriber } from './032-describe-configs.js';
import type { MirrorConfigAlterer } from './044-incremental-alter-configs.js';
import { produceHandler } from './000-produce.js';
import { fetchHandler } from './001-fetch.js';
import { metadataHandler } from './003-metadata.js';
import { apiVersionsHandler } from './018-api-versions.js';
import { createTopicsHandler } from './019-create-topics.js';
import { deleteTopicsHandler } from './020-delete-topics.js';
import { describeConfigsHandler } from './032-describe-configs.js';
import { alterConfigsHandler } from './033-alter-configs.js';
import { createPartitionsHandler } from './037-create-partitions.js';
import { incrementalAlterConfigsHandler } from './044-incremental-alter-configs.js';
import { describeClusterHandler } from './060-describe-cluster.js';
import { describeTopicPartitionsHandler } from './075-describe-topic-partitions.js';
import { listOffsetsHandler } from './002-list-offsets.js';
import { deleteRecordsHandler } from './021-delete-records.js';
import { offsetForLeaderEpochHandler } from './023-offset-for-leader-epoch.js';
import { describeLogDirsHandler } from './035-describe-log-dirs.js';
import { describeProducersHandler } from './061-describe-producers.js';
import { listConfigResourcesHandler } from './074-list-config-resources.js';
import { describeAclsHandler } from './029-describe-acls.js';
import { createAclsHandler } from './030-create-acls.js';
import { deleteAclsHandler } from './031-delete-acls.js';
import { electLeadersHandler } from './043-elect-leaders.js';
import { alterPartitionReassignmentsHandler } from './045-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from './046-list-partition-reassignments.js';
import { describeQuorumHandler } from './055-describe-quorum.js';
import { alterPartitionHandler } from './056-alter-partition.js';
import { describeClientQuotasHandler } from './048-describe-client-quotas.js';
import { alterClientQuotasHandler } from './049-alter-client-quotas.js';
import { describeUserScramCredentialsHandler } from './050-describe-user-scram-credentials.js';
import { alterUserScramCredentialsHandler } from './051-alter-user-scram-credentials.js';
import type { ShareGroups } from '../share-wiring.js';
import { shareGroupHeartbeatHandler } from './076-share-group-heartbeat.js';
import { shareGroupDescribeHandler } from './077-share-group-describe.js';
import { shareFetchHandler } from './078-share-fetch.js';
import { shareAcknowledgeHandler } from './079-share-acknowledge.js';
import { describeShareGroupOffsetsHandler } from './090-describe-share-group-offsets.js';
import { alterShareGroupOffsetsHandler } from './091-alter-share-group-offsets.js';
import { deleteShareGroupOffsetsHandler } from './092-delete-share-group-offsets.js';
import { shareStateHandlers } from '../../share/share-state-handlers.js';
import type { GroupCoordinator } from '../../coordinator/group-coordinator.js';
import { streamsGroupHeartbeatHandler } from './088-streams-group-heartbeat.js';
import { streamsGroupDescribeHandler } from './089-streams-group-describe.js';

interface MirrorConfigHooks extends MirrorConfigDescriber, MirrorConfigAlterer {}

export function brokerHandlers(ctx: BrokerContext, mirror: () => MirrorConfigHooks | null = () => null): ApiHandler[] {
  const sessions = new FetchManager({
    maxSlots: ctx.config.int('max.incremental.fetch.session.cache.slots'),
    evictionMs: ctx.config.int('min.incremental.fetch.session.eviction.ms'),
    log: ctx.log,
  });
  return [
    produceHandler(ctx),
    fetchHandler(ctx, sessions),
    metadataHandler(ctx),
    apiVersionsHandler(ctx),
    createTopicsHandler(ctx),
    deleteTopicsHandler(ctx),
    describeConfigsHandler(ctx, mirror),
    alterConfigsHandler(ctx),
    createPartitionsHandler(ctx),
    incrementalAlterConfigsHandler(ctx, mirror),
    describeClusterHandler(ctx),
    describeTopicPartitionsHandler(ctx),
    listOffsetsHandler(ctx),
    deleteRecordsHandler(ctx),
    offsetForLeaderEpochHandler(ctx),
    describeLogDirsHandler(ctx),
    describeProducersHandler(ctx),
    listConfigResourcesHandler(ctx),
    describeAclsHandler(ctx),
    createAclsHandler(ctx),
    deleteAclsHandler(ctx),
    describeUserScramCredentialsHandler(ctx),
    alterUserScramCredentialsHandler(ctx),
    electLeadersHandler(ctx),
    describeClientQuotasHandler(ctx),
    alterClientQuotasHandler(ctx),
    alterPartitionReassignmentsHandler(ctx),
    listPartitionReassignmentsHandler(ctx),
    describeQuorumHandler(ctx),
    alterPartitionHandler(ctx),
  ];
}

/**
 * The share group APIs (KIP-932). `otherGroupType` says whether a group id is held by a classic,
 * consumer or streams group, which a share heartbeat may not join nor ShareGroupDescribe describe.
 */
export function shareHandlers(ctx: BrokerContext, share: ShareGroups, otherGroupType: (groupId: string) => Promise<boolean>): ApiHandler[] {
  return [
    shareGroupHeartbeatHandler(share, otherGroupType),
    shareGroupDescribeHandler(ctx, share, otherGroupType),
    shareFetchHandler(share),
    shareAcknowledgeHandler(share),
    describeShareGroupOffsetsHandler(ctx, share),
    alterShareGroupOffsetsHandler(ctx, share),
    deleteShareGroupOffsetsHandler(ctx, share),
    ...shareStateHandlers(share.state, (topicId, partition) => ctx.image.topicsById.get(topicId)?.partitions[partition] !== undefined),
  ];
}

/**
 * The streams group APIs (KIP-1071), offered while group.coordinator.rebalance.protocols names
 * "streams" (Kafka's default list does).
 */
export function streamsHandlers(ctx: BrokerContext, gc: GroupCoordinator): ApiHandler[] {
  const protocols = (ctx.configs.brokerValue('group.coordinator.rebalance.protocols') ?? 'classic,consumer,streams').split(',').map((p) => p.trim().toLowerCase());
  if (!protocols.includes('streams')) return [];
  return [streamsGroupHeartbeatHandler(gc), streamsGroupDescribeHandler(gc)];
}
