/**
 * Plain snapshots of the cluster for the metrics and the status page, read through the node's
 * handlers (see node-view.ts): mirrors from ListClusterMirrors + DescribeClusterMirrors (the
 * data behind `fjord cluster-mirrors --describe --json`), groups from ListGroups + OffsetFetch
 * with lag against the local high watermark (as kafka-consumer-groups.sh computes it), brokers
 * and partitions from Metadata, open transactions from ListTransactions.
 */
import { ApiKey } from '../protocol/generated/api-table.js';
import type { DescribeClusterMirrorsRequest } from '../protocol/generated/messages/describe-cluster-mirrors-request.js';
import type { DescribeClusterMirrorsResponseInput } from '../protocol/generated/messages/describe-cluster-mirrors-response.js';
import type { ListClusterMirrorsRequest } from '../protocol/generated/messages/list-cluster-mirrors-request.js';
import type { ListClusterMirrorsResponseInput } from '../protocol/generated/messages/list-cluster-mirrors-response.js';
import type { ListGroupsRequest } from '../protocol/generated/messages/list-groups-request.js';
import type { ListGroupsResponseInput } from '../protocol/generated/messages/list-groups-response.js';
import type { ListTransactionsRequest } from '../protocol/generated/messages/list-transactions-request.js';
import type { ListTransactionsResponseInput } from '../protocol/generated/messages/list-transactions-response.js';
import type { MetadataRequest } from '../protocol/generated/messages/metadata-request.js';
import type { MetadataResponseInput } from '../protocol/generated/messages/metadata-response.js';
import type { OffsetFetchRequest } from '../protocol/generated/messages/offset-fetch-request.js';
import type { OffsetFetchResponseInput } from '../protocol/generated/messages/offset-fetch-response.js';
import { callHandler, type NodeView } from './node-view.js';

export interface MirrorPartitionStatus {
  readonly topic: string;
  readonly partition: number;
  readonly state: string;
  readonly sourceOffset: number;
  readonly destinationOffset: number;
  /** Offsets behind the source high watermark; -1 when unknown (not MIRRORING). */
  readonly lag: number;
  readonly retryAttempt: number;
  readonly errorMessage: string | null;
}

export interface MirrorStatus {
  readonly name: string;
  readonly sourceBootstrap: string;
  readonly sourceClusterId: string;
  readonly errorCode: number;
  readonly partitions: readonly MirrorPartitionStatus[];
}

export async function readMirrors(view: NodeView): Promise<MirrorStatus[]> {
  const listReq: ListClusterMirrorsRequest = { includeTopicNames: false };
  const list = await callHandler<ListClusterMirrorsResponseInput>(view, ApiKey.ListClusterMirrors, 0, listReq);
  if (list === null) return [];
  const describeReq: DescribeClusterMirrorsRequest = { mirrorNames: [], includeAuthorizedOperations: false, clusterId: null, lastMirrorEpochLookups: [] };
  const described = await callHandler<DescribeClusterMirrorsResponseInput>(view, ApiKey.DescribeClusterMirrors, 0, describeReq);
  const byName = new Map((described?.mirrors ?? []).map((m) => [m.mirrorName ?? '', m]));
  return (list.mirrors ?? []).map((m) => {
    const name = m.mirrorName ?? '';
    const d = byName.get(name);
    const partitions: MirrorPartitionStatus[] = [];
    for (const t of d?.topics ?? []) {
      for (const p of t.partitions ?? []) {
        partitions.push({
          topic: t.topicName ?? '',
          partition: p.partitionIndex ?? 0,
          state: p.stateValue ?? 'UNKNOWN',
          sourceOffset: Number(p.sourceOffset ?? -1n),
          destinationOffset: Number(p.destinationOffset ?? -1n),
          lag: Number(p.lag ?? -1n),
          retryAttempt: p.retryAttempt ?? 0,
          errorMessage: p.errorMessage ?? null,
        });
      }
    }
    return { name, sourceBootstrap: m.sourceBootstrap ?? '', sourceClusterId: m.sourceClusterId ?? '', errorCode: d?.errorCode ?? 0, partitions };
  });
}

interface GroupPartitionLag {
  readonly topic: string;
  readonly partition: number;
  readonly committedOffset: number;
  readonly endOffset: number;
  readonly lag: number;
}

export interface GroupStatus {
  readonly groupId: string;
  readonly state: string;
  readonly type: string;
  readonly partitions: readonly GroupPartitionLag[];
}

export async function readGroups(view: NodeView): Promise<GroupStatus[]> {
  const listReq: ListGroupsRequest = { statesFilter: [], typesFilter: [] };
  const list = await callHandler<ListGroupsResponseInput>(view, ApiKey.ListGroups, 5, listReq);
  const groups = list?.groups ?? [];
  if (groups.length === 0) return [];
  const fetchReq: OffsetFetchRequest = {
    groupId: '',
    topics: null,
    groups: groups.map((g) => ({ groupId: g.groupId ?? '', memberId: null, memberEpoch: -1, topics: null })),
    requireStable: false,
  };
  const offsets = await callHandler<OffsetFetchResponseInput>(view, ApiKey.OffsetFetch, 9, fetchReq);
  const byGroup = new Map((offsets?.groups ?? []).map((g) => [g.groupId ?? '', g]));
  return groups.map((g) => {
    const groupId = g.groupId ?? '';
    const partitions: GroupPartitionLag[] = [];
    for (const t of byGroup.get(groupId)?.topics ?? []) {
      for (const p of t.partitions ?? []) {
        const committed = Number(p.committedOffset ?? -1n);
        if (committed < 0 || t.name === undefined) continue;
        const end = view.log(t.name, p.partitionIndex ?? 0)?.highWatermark ?? -1;
        partitions.push({ topic: t.name, partition: p.partitionIndex ?? 0, committedOffset: committed, endOffset: end, lag: end < 0 ? -1 : Math.max(0, end - committed) });
      }
    }
    partitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
    return { groupId, state: g.groupState ?? '', type: g.groupType ?? g.protocolType ?? '', partitions };
  });
}

interface BrokerStatus {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

interface TopicStatus {
  readonly name: string;
  readonly topicId: string;
  readonly internal: boolean;
  readonly partitions: readonly { partition: number; leader: number; leaderEpoch: number; replicas: readonly number[]; isr: readonly number[] }[];
}

export interface ClusterStatus {
  readonly clusterId: string;
  readonly controllerId: number;
  readonly brokers: readonly BrokerStatus[];
  readonly topics: readonly TopicStatus[];
}

export async function readCluster(view: NodeView): Promise<ClusterStatus> {
  const req: MetadataRequest = { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
  const md = await callHandler<MetadataResponseInput>(view, ApiKey.Metadata, 12, req);
  const topics: TopicStatus[] = (md?.topics ?? [])
    .map((t) => ({
      name: t.name ?? '',
      topicId: t.topicId ?? '',
      internal: t.isInternal ?? false,
      partitions: [...(t.partitions ?? [])]
        .map((p) => ({ partition: p.partitionIndex ?? 0, leader: p.leaderId ?? -1, leaderEpoch: p.leaderEpoch ?? -1, replicas: p.replicaNodes ?? [], isr: p.isrNodes ?? [] }))
        .sort((a, b) => a.partition - b.partition),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    clusterId: md?.clusterId ?? view.clusterId,
    controllerId: md?.controllerId ?? -1,
    brokers: (md?.brokers ?? []).map((b) => ({ nodeId: b.nodeId ?? -1, host: b.host ?? '', port: b.port ?? 0, rack: b.rack ?? null })),
    topics,
  };
}

/** Transactional ids by state (Ongoing, PrepareCommit, ...), from ListTransactions. */
export async function readTransactionStates(view: NodeView): Promise<Map<string, number>> {
  const req: ListTransactionsRequest = { stateFilters: [], producerIdFilters: [], durationFilter: -1n, transactionalIdPattern: null };
  const res = await callHandler<ListTransactionsResponseInput>(view, ApiKey.ListTransactions, 1, req);
  const out = new Map<string, number>();
  for (const t of res?.transactionStates ?? []) out.set(t.transactionState ?? '', (out.get(t.transactionState ?? '') ?? 0) + 1);
  return out;
}
