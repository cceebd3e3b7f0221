import type { CoordinatorHost } from './coordinator-host.js';

/** Group coordinator settings, read from the broker config with Kafka's keys and defaults. */
export interface GroupConfig {
  readonly offsetsTopicPartitions: number;
  readonly minSessionTimeoutMs: number;
  readonly maxSessionTimeoutMs: number;
  readonly initialRebalanceDelayMs: number;
  readonly maxGroupSize: number;
  readonly offsetsRetentionMs: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetMetadataMaxBytes: number;
  readonly consumerSessionTimeoutMs: number;
  readonly consumerHeartbeatIntervalMs: number;
  readonly consumerMinSessionTimeoutMs: number;
  readonly consumerMaxSessionTimeoutMs: number;
  /** Server assignors offered to KIP-848 members; the first is the default. */
  readonly consumerAssignors: readonly string[];
}

function int(host: CoordinatorHost, key: string, dflt: number): number {
  const raw = host.config(key);
  if (raw === undefined || raw.trim() === '') return dflt;
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new Error(`invalid ${key}: ${raw}`);
  return v;
}

export function groupConfigFrom(host: CoordinatorHost): GroupConfig {
  const assignors = (host.config('group.consumer.assignors') ?? 'uniform,range')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .map((s) => (s.endsWith('uniformassignor') ? 'uniform' : s.endsWith('rangeassignor') ? 'range' : s))
    .filter((s) => s === 'uniform' || s === 'range');
  return {
    offsetsTopicPartitions: int(host, 'offsets.topic.num.partitions', 50),
    minSessionTimeoutMs: int(host, 'group.min.session.timeout.ms', 6000),
    maxSessionTimeoutMs: int(host, 'group.max.session.timeout.ms', 1800000),
    initialRebalanceDelayMs: int(host, 'group.initial.rebalance.delay.ms', 3000),
    maxGroupSize: int(host, 'group.max.size', 2147483647),
    offsetsRetentionMs: int(host, 'offsets.retention.minutes', 10080) * 60000,
    offsetsRetentionCheckIntervalMs: int(host, 'offsets.retention.check.interval.ms', 600000),
    offsetMetadataMaxBytes: int(host, 'offset.metadata.max.bytes', 4096),
    consumerSessionTimeoutMs: int(host, 'group.consumer.session.timeout.ms', 45000),
    consumerHeartbeatIntervalMs: int(host, 'group.consumer.heartbeat.interval.ms', 5000),
    consumerMinSessionTimeoutMs: int(host, 'group.consumer.min.session.timeout.ms', 45000),
    consumerMaxSessionTimeoutMs: int(host, 'group.consumer.max.session.timeout.ms', 60000),
    consumerAssignors: assignors.length > 0 ? assignors : ['uniform', 'range'],
  };
}
